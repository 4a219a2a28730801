//! Integration tests of the agent loop with the scripted in-process model.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
