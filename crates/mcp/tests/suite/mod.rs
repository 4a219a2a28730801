//! The test modules; `support` starts the servers.

mod agent;
mod http;
mod refresh;
mod stdio;
mod supervision;
pub(crate) mod support;
mod toolkit;
