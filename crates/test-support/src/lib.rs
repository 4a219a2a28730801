//! Test helpers for Oxiscope crates. Not published.
//!
//! [`FakeServer`] is a real HTTP/1.1 server on `127.0.0.1` with an ephemeral port that
//! answers with responses scripted in advance ([`ScriptedResponse`]), in order, and records
//! every request ([`RecordedRequest`]) for assertions. Bodies can be whole or streamed in
//! chunks with delays, and can be cut off before their end to imitate a broken
//! connection. Fake model-provider servers are meant to be built on it.
//!
//! [`fixtures`] loads the AgentScope 2.0.11 reference data stored in the
//! repository and checks that wire examples round-trip.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! use oxiscope_test_support::{FakeServer, ScriptedResponse};
//!
//! let server = FakeServer::start().await?;
//! server.push(ScriptedResponse::json(200, &serde_json::json!({"ok": true})));
//! let url = server.url("/v1/thing");
//! // ... point the code under test at `url`, then:
//! assert!(server.requests().is_empty());
//! # Ok(())
//! # }
//! ```

pub mod anthropic;
pub mod chat;
pub mod discord;
mod fake_server;
pub mod fixtures;
mod leak;
pub mod ollama;
mod openai;
mod script;
mod scripted;
pub mod servers;
mod skip;
pub mod slack;
pub mod telegram;

pub use fake_server::{FakeServer, RecordedRequest};
pub use leak::{PROC_SWEEP, host_env_pairs, leaked_env_pair};
pub use openai::{
    OPENAI_REQUEST_ID, OpenAiScript, openai_error, openai_invalid_api_key, openai_rate_limited,
};
pub use script::{BodyEnd, Chunk, ScriptedBody, ScriptedResponse};
pub use scripted::{RecordedChatRequest, SCRIPTED_MODEL_NAME, ScriptedModel, ScriptedTurn};
pub use skip::skip;
