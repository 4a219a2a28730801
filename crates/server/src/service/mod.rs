//! The logic behind the session and chat routes: loading owned records,
//! building the agent of a session, running replies in the background.

pub(crate) mod address;
mod build;
pub(crate) mod deferred;
pub(crate) mod deliver;
pub(crate) mod hub;
mod input;
mod journal;
pub(crate) mod knowledge;
pub(crate) mod lease;
pub(crate) mod library;
pub(crate) mod models;
mod naming;
pub(crate) mod offload;
mod run;
mod run_slots;
pub(crate) mod schedule;
mod schedule_tools;
pub(crate) mod scheduler;
mod sessions;
pub(crate) mod takeover;
pub(crate) mod team;
#[cfg(test)]
pub(crate) mod testing;
mod usage;
pub(crate) mod workspace;

pub use hub::{HubError, HubSource};
pub(crate) use input::{ChatInput, check_media, parse_input};
pub use naming::SessionTitles;
pub(crate) use naming::default_name;
pub(crate) use run::{RunRequest, forget_session, interrupt, push_inbox, queue, start_run, wake};
pub(crate) use sessions::{
    agent_state, check_session_cap, load_session, session_status, session_view,
};
pub(crate) use usage::{check_quota, user_usage};

/// Runs `tick` every `every` (at least 50 ms apart) until the server shuts
/// down: the loop of the scheduler, the takeover sweeper and the
/// background-task keeper.
pub(crate) fn spawn_periodic<F, Fut>(
    state: crate::state::AppState,
    every: std::time::Duration,
    tick: F,
) -> tokio::task::JoinHandle<()>
where
    F: Fn(crate::state::AppState) -> Fut + Send + 'static,
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
