//! Oxiscope, an agent framework wire-compatible with AgentScope 2.0.
//!
//! This facade re-exports the workspace crates under short names; the
//! `oxiscope` binary built from the same package offers the command line.
//! [`render`] holds the console renderer `oxiscope chat` prints with, for
//! rendering any agent's event stream in a terminal.

pub use oxiscope_message as message;
pub use oxiscope_permission as permission;
pub mod render;
