//! Every example of `examples/` built and run as a user runs it, against a
//! fake OpenAI server on 127.0.0.1 that plays the model's side (the
//! examples read `OPENAI_API_KEY` and `OPENAI_BASE_URL` like any program
//! built on `oxiscope::chat_model_from_env`), checking what each prints
//! and what it sent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "examples/harness.rs"]
mod harness;

#[path = "examples/agents.rs"]
mod agents;

#[path = "examples/parts.rs"]
mod parts;
