//! Integration tests of oxiscope-http against a scripted local server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
