//! Real servers started for tests: each on a free loopback port with its
//! data in a temporary directory, stopped when dropped; a test that needs a
//! missing server binary skips loudly ([`crate::skip`]).

pub mod postgres;
pub mod redis;
