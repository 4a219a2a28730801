//! Integration tests of oxiscope-mcp against real MCP servers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
