#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests of the providers crate.

mod suite;
