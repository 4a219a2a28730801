//! The engine of `oxiscope serve`, with no HTTP in it.
//!
//! What happens to a session between requests belongs here, so that every
//! door into the service — the REST + SSE routes, schedules, teams, and
//! next IM channels and realtime voice — is a thin layer over one
//! [`Engine`], reaching sessions through its [`Sessions`] handle
//! ([`Sessions::submit`], [`Sessions::interrupt`], [`Sessions::subscribe`]):
//!
//! - sessions and their runs: the inbox, the run loop and its commit,
//!   leases and takeover of runs whose runner died, the tool journal,
//!   deferred hints, background tool calls, naming, usage and quotas;
//! - sessions' lifecycle: [`Sessions::create`], [`Sessions::update`],
//!   [`Sessions::list`], [`Sessions::delete`], [`Sessions::messages`];
//! - typed views of the stored records ([`spec`]: `AgentSpec`,
//!   `SessionSpec`, `ScheduleSpec`), parsed once when read and keeping
//!   what they do not know for the wire;
//! - the agent recipe: a stored agent and session become an agent with
//!   its model, workspace tools, knowledge and memory;
//! - schedules and their scheduler, agent teams, the MCP and skill hubs
//!   and the user's library, knowledge bases and their indexing;
//! - [`TenantPolicy`] (what the operator lets tenants choose), [`Sealer`]
//!   (secrets at rest, capability tokens) and [`SessionError`], the
//!   refusals and failures every door maps its own way.
//!
//! The records and views in AgentScope's wire names are in [`api`].

pub mod access;
pub mod address;
pub mod api;
pub mod build;
mod config;
mod credentials;
pub mod deferred;
pub mod deliver;
mod engine;
mod error;
mod handle;
pub mod hub;
pub mod inbox;
pub mod input;
pub mod journal;
pub mod knowledge;
pub mod lease;
pub mod library;
mod lifecycle;
pub mod metrics;
pub mod models;
pub mod naming;
pub mod offload;
pub mod otel;
mod policy;
mod pyjson;
pub mod recipe;
pub mod records;
pub mod run;
pub mod run_slots;
pub mod schedule;
pub mod schedule_tools;
pub mod scheduler;
mod sealing;
pub mod sessions;
pub mod spec;
pub mod takeover;
pub mod team;
#[cfg(test)]
pub(crate) mod testing;
pub mod upload;
pub mod usage;
pub mod workspace;

pub use config::{EngineConfig, WorkspaceMode};
pub use engine::ActiveRun;
pub use engine::Engine;
pub use error::SessionResult;
pub use error::{Result, SessionError, missing_field, shape_error};
pub use handle::{SessionKey, Sessions};
pub use hub::{HubError, HubSource};
pub use input::{ChatInput, check_media, parse_input};
pub use lifecycle::{MAX_PAGE, Page};
pub use naming::{SessionTitles, default_name};
pub use policy::{QuotaWindow, TenantPolicy, mode_within, schedule_mode_within};
pub use pyjson::to_python_json;
pub use recipe::{AgentRecipe, ExtraTools, RecipeContext, Recipes};
pub use run::{
    RunRequest, Submitted, forget_session, interrupt, push_inbox, queue, start_run, wake,
};
pub use sealing::{CryptoError, KEY_ENV, KEY_FILE, PREFIX as SEALED_PREFIX, Purpose, Sealer};
pub use sessions::{agent_state, check_session_cap, load_session, session_status, session_view};
pub use usage::{check_quota, user_usage};

/// Runs `tick` every `every` (at least 50 ms apart) until the server shuts
/// down: the loop of the scheduler, the takeover sweeper and the
/// background-task keeper.
pub(crate) fn spawn_periodic<F, Fut>(
    state: crate::Engine,
    every: std::time::Duration,
    tick: F,
) -> tokio::task::JoinHandle<()>
where
    F: Fn(crate::Engine) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let every = every.max(std::time::Duration::from_millis(50));
    tokio::spawn(async move {
        let stop = state.shutdown_token().clone();
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(every) => {}
            }
            tick(state.clone()).await;
        }
    })
}
