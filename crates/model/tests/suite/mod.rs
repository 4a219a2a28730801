mod chat_wire;
mod credential_schemas;
mod credentials;
mod fixtures;
mod model_card_golden;
mod model_cards;
mod robustness;
mod tokens;
