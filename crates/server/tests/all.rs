//! Integration tests of oxiscope-server: real HTTP on 127.0.0.1 against
//! the fake OpenAI-compatible server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
