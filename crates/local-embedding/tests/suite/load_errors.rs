//! Loading a directory: prefixes, and typed errors for missing or broken
//! files.

use oxiscope_local_embedding::{Error, MiniLmEmbeddingModel};

use super::support::{safetensors_bytes, tiny_model, write_files};

fn load_err(files: &[(&str, Vec<u8>)]) -> Error {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), files);
    MiniLmEmbeddingModel::load(dir.path()).unwrap_err()
}

fn replaced(name: &str, bytes: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    tiny_model("")
        .into_iter()
        .map(|(n, b)| {
            if n == name {
                (n, bytes.to_vec())
            } else {
                (n, b)
            }
        })
        .collect()
}

#[test]
fn weights_with_and_without_the_bert_prefix_give_the_same_vectors() {
    let plain = tempfile::tempdir().unwrap();
    let prefixed = tempfile::tempdir().unwrap();
    write_files(plain.path(), &tiny_model(""));
    write_files(prefixed.path(), &tiny_model("bert."));
    let texts = ["hello worlds", "", "unknown words here"];
    let a = MiniLmEmbeddingModel::load(plain.path()).unwrap();
    let b = MiniLmEmbeddingModel::load(prefixed.path()).unwrap();
    let va = a.embed_blocking(&texts).unwrap();
    let vb = b.embed_blocking(&texts).unwrap();
    assert_eq!(va, vb);
    assert_eq!(va[0].len(), 8);
    assert_eq!(a.token_ids("hello worlds").unwrap(), vec![2, 5, 6, 7, 3]);
    for v in &va {
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "norm {norm}");
    }
}

#[test]
fn a_missing_directory_or_file_is_a_missing_file_error() {
    let err = MiniLmEmbeddingModel::load("/nonexistent/oxiscope/minilm").unwrap_err();
    assert!(
        matches!(err, Error::MissingFile { ref path } if path.ends_with("config.json")),
        "{err}"
    );
    let without: Vec<_> = tiny_model("")
        .into_iter()
        .filter(|(n, _)| *n != "model.safetensors")
        .collect();
    let err = load_err(&without);
    assert!(
        matches!(err, Error::MissingFile { ref path } if path.ends_with("model.safetensors")),
        "{err}"
    );
    let without: Vec<_> = tiny_model("")
        .into_iter()
        .filter(|(n, _)| *n != "vocab.txt")
        .collect();
    assert!(matches!(load_err(&without), Error::MissingFile { .. }));
}

#[test]
fn truncated_weights_are_a_corrupt_file_error() {
    let mut weights = tiny_model("").remove(2).1;
    weights.truncate(weights.len() / 2);
    let err = load_err(&replaced("model.safetensors", &weights));
    assert!(
        matches!(err, Error::Corrupt { ref path, .. } if path.ends_with("model.safetensors")),
        "{err}"
    );
    let err = load_err(&replaced("model.safetensors", b"garbage"));
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
}

#[test]
fn a_missing_tensor_or_a_wrong_shape_is_named() {
    let only_one = safetensors_bytes(&[(
        "embeddings.word_embeddings.weight".to_owned(),
        vec![8, 4],
        vec![0.0; 32],
    )]);
    let err = load_err(&replaced("model.safetensors", &only_one));
    assert!(
        err.to_string().contains("shape [8, 4], expected [8, 8]"),
        "{err}"
    );
    let none = safetensors_bytes(&[("other".to_owned(), vec![1], vec![0.0])]);
    let err = load_err(&replaced("model.safetensors", &none));
    assert!(
        err.to_string()
            .contains("embeddings.word_embeddings.weight is missing"),
        "{err}"
    );
}

#[test]
fn a_bad_config_is_a_corrupt_file_error() {
    let err = load_err(&replaced("config.json", b"{not json"));
    assert!(
        matches!(err, Error::Corrupt { ref path, .. } if path.ends_with("config.json")),
        "{err}"
    );
    let relu = serde_json::json!({
        "vocab_size": 8, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 3,
        "intermediate_size": 16, "max_position_embeddings": 16,
    });
    let err = load_err(&replaced(
        "config.json",
        &serde_json::to_vec(&relu).unwrap(),
    ));
    assert!(err.to_string().contains("not a multiple"), "{err}");
    let err = load_err(&replaced("vocab.txt", b"hello\nworld\n"));
    assert!(err.to_string().contains("no [CLS]"), "{err}");
}
