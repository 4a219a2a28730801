//! Token ids match the reference Python tokenizer (tests/golden/token_ids.json),
//! both from `tokenizer.json` and from `vocab.txt` alone.

use oxiscope_local_embedding::MiniLmEmbeddingModel;
use pretty_assertions::assert_eq;

use super::support::{golden, model, model_dir};

fn expected() -> Vec<(String, Vec<u32>)> {
    golden("token_ids.json")["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let ids = c["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| u32::try_from(i.as_u64().unwrap()).unwrap())
                .collect();
            (c["text"].as_str().unwrap().to_owned(), ids)
        })
        .collect()
}

fn check(model: &MiniLmEmbeddingModel) {
    let cases = expected();
    assert!(cases.len() >= 20);
    for (text, ids) in cases {
        assert_eq!(model.token_ids(&text).unwrap(), ids, "for {text:?}");
    }
}

#[test]
fn ids_from_tokenizer_json_match_the_reference_tokenizer() {
    let Some(model) = model() else { return };
    check(&model);
}

#[test]
fn ids_from_vocab_txt_alone_match_the_reference_tokenizer() {
    let Some(dir) = model_dir() else { return };
    let copy = tempfile::tempdir().unwrap();
    for file in ["config.json", "vocab.txt", "model.safetensors"] {
        std::os::unix::fs::symlink(dir.join(file), copy.path().join(file)).unwrap();
    }
    let model = MiniLmEmbeddingModel::load(copy.path()).unwrap();
    check(&model);
}
