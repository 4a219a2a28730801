//! Integration tests of `oxiscope-model`, one module per concern.

// Helpers outside `#[test]` functions fail loudly too; clippy's test
// allowances only cover the test functions themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
