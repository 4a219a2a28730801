//! The test modules; `support` starts the servers.

mod agent;
mod http;
mod stdio;
mod supervision;
pub(crate) mod support;
mod toolkit;
