//! Loading the reference vectors copied from AgentScope 2.0.11.

pub(crate) use oxiscope_test_support::fixtures::{examples, load};
