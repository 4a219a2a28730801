//! Model cards: the card type, the YAML form, the merge rules and the
//! shipped catalog.

mod catalog;
pub(crate) mod datetime;
mod merge;
mod model_card;
mod spec;

pub(crate) use catalog::{shipped_cards, with_shipped_cards};
pub use merge::{
    AUDIO_PARAMETERS, THINKING_OUTPUT_TYPE, THINKING_PARAMETERS, merge_parameter_schema,
};
pub use model_card::{ModelCard, ModelStatus};
pub use spec::CardSpec;
