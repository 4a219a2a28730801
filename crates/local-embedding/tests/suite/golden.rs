//! The vectors match sentence-transformers' (tests/golden/generate.py).

use oxiscope_local_embedding::{MINILM_DIMENSIONS, MINILM_MODEL_NAME};
use oxiscope_model::{EmbeddingModel, EmbeddingRequest};

use super::support::{cosine, golden, model};

fn cases() -> Vec<(String, Vec<f32>)> {
    let file = golden("minilm_vectors.json");
    file["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let text = case["text"].as_str().unwrap().to_owned();
            let vector = case["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            (text, vector)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_match_sentence_transformers_for_every_golden_input() {
    let Some(model) = model() else { return };
    let cases = cases();
    assert!(cases.len() >= 12);
    let texts: Vec<String> = cases.iter().map(|(t, _)| t.clone()).collect();
    let answer = model.embed(EmbeddingRequest::new(&texts)).await.unwrap();
    assert_eq!(answer.model, MINILM_MODEL_NAME);
    assert_eq!(answer.embeddings.len(), cases.len());
    let mut lowest = 1.0_f64;
    for ((text, expected), got) in cases.iter().zip(&answer.embeddings) {
        assert_eq!(got.len(), MINILM_DIMENSIONS);
        let similarity = cosine(got, expected);
        lowest = lowest.min(similarity);
        assert!(
            similarity >= 0.9999,
            "cosine {similarity} for {:?}",
            text.chars().take(40).collect::<String>()
        );
        let norm: f32 = got.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    }
    eprintln!("lowest cosine to sentence-transformers: {lowest:.7}");
    // Every word piece read is counted: the two long inputs are cut at 256.
    assert!(answer.usage.tokens.unwrap() > 512);
}

#[test]
fn one_text_alone_gets_the_same_vector_as_in_a_padded_batch() {
    let Some(model) = model() else { return };
    let texts = [
        "short",
        "a much longer sentence that needs a lot of padding for the short one",
    ];
    let together = model.embed_blocking(&texts).unwrap();
    let alone = model.embed_blocking(&texts[..1]).unwrap();
    assert!(cosine(&together[0], &alone[0]) > 0.99999);
}

#[tokio::test]
async fn a_wrong_size_and_an_empty_request_are_answered_without_running() {
    let Some(model) = model() else { return };
    let texts = vec!["x".to_owned()];
    let size = std::num::NonZeroU32::new(512).unwrap();
    let err = model
        .embed(EmbeddingRequest::new(&texts).with_dimensions(size))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not 512"), "{err}");
    let empty = model.embed(EmbeddingRequest::new(&[])).await.unwrap();
    assert!(empty.embeddings.is_empty());
    assert_eq!(
        EmbeddingModel::dimensions(&model).map(|d| d.get()),
        Some(384)
    );
}
