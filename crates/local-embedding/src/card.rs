//! The [`EmbeddingModelCard`] of the offline model.

use oxiscope_model::EmbeddingModelCard;
use serde_json::json;

use crate::config::DEFAULT_MAX_SEQ_LEN;
use crate::model::{MINILM_DIMENSIONS, MINILM_MODEL_NAME};

/// The card of all-MiniLM-L6-v2: text in, 384-value vectors out, 256
/// word pieces per text.
///
/// ```
/// let card = oxiscope_local_embedding::minilm_card()?;
/// assert_eq!(card.name, "all-MiniLM-L6-v2");
/// assert_eq!(card.dimensions.get(), 384);
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// # Errors
/// None in practice: the card is fixed (a test builds it); the JSON
/// decoding it goes through is fallible in type only.
pub fn minilm_card() -> Result<EmbeddingModelCard, serde_json::Error> {
    let card = json!({
        "type": "embedding_model",
        "name": MINILM_MODEL_NAME,
        "label": "all-MiniLM-L6-v2 (offline)",
        "dimensions": MINILM_DIMENSIONS,
        "context_size": DEFAULT_MAX_SEQ_LEN,
        "parameter_schema": {"type": "object", "properties": {}, "required": []},
    });
    serde_json::from_value(card)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_serialises_as_an_embedding_model_without_size_choices() {
        let wire = serde_json::to_value(minilm_card().unwrap()).unwrap();
        assert_eq!(wire["type"], "embedding_model");
        assert_eq!(wire["dimensions"], 384);
        assert_eq!(wire["supported_dimensions"], serde_json::Value::Null);
        assert_eq!(wire["context_size"], 256);
        assert_eq!(wire["status"], "active");
    }
}
