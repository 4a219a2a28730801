//! Provider credentials: one struct per registered type, the [`Credential`]
//! union, and the [`CredentialType`] registry.

mod any;
mod common;
mod kind;
mod schema;

mod anthropic;
mod dashscope;
mod deepseek;
mod gemini;
mod minimax;
mod moonshot;
mod ollama;
mod openai;
mod volcengine;
mod xai;

pub use anthropic::AnthropicCredential;
pub use any::Credential;
pub use dashscope::DashScopeCredential;
pub use deepseek::DeepSeekCredential;
pub use gemini::GeminiCredential;
pub use kind::CredentialType;
pub use minimax::MiniMaxCredential;
pub use moonshot::MoonshotCredential;
pub use ollama::OllamaCredential;
pub use openai::OpenAiCredential;
pub use volcengine::VolcengineCredential;
pub use xai::XaiCredential;
