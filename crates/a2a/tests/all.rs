//! Integration tests of the A2A client: a scripted fake server for the edge
//! cases, and a real A2A server (the official Python SDK) for the wire.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
