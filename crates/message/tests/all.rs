//! Integration tests of `oxiscope-message`, mostly golden tests against the
//! AgentScope 2.0.11 vectors in `fixtures/agentscope-2.0.11/`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

mod suite;
