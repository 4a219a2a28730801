//! The logic behind the session and chat routes: loading owned records,
//! building the agent of a session, running replies in the background.

mod build;
mod input;
pub(crate) mod models;
mod run;
mod sessions;

pub(crate) use input::{ChatInput, parse_input};
pub(crate) use run::{RunRequest, forget_session, interrupt, start_run};
pub(crate) use sessions::{agent_state, load_session, session_status, session_view};
