//! The background task manager of a process: the offloaded calls it
//! runs, their watchers (store the outcome, then deliver it), and the
//! recovery of tasks whose process died (see the parent module's docs).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_message::{HintBlock, ToolResultState};
use oxiscope_storage::{BackgroundTaskRecord, BackgroundTaskState, epoch_millis};
use oxiscope_tool::ToolStream;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Job, KEEP_DELIVERED_DAYS, Output};
use crate::Engine;
use crate::error::SessionError;

/// The name the delivered hint messages are signed with.
pub(crate) const SENDER: &str = "background_task";

/// How many stale tasks one recovery pass takes over at most.
const RECOVER_BATCH: u32 = 100;

/// The background calls this process runs, by task id, and its boot id
/// (the `owner` of their rows).
#[derive(Debug)]
pub struct BackgroundTasks {
    boot: String,
    running: Mutex<HashMap<String, Running>>,
}

#[derive(Debug)]
struct Running {
    session_id: String,
    cancel: CancellationToken,
}

/// The most background calls one user may have running, counted across
/// every replica (in the store); a call past it is not offloaded (its reply waits for it, as without
/// offloading), so a tenant's model cannot pile up processes without end.
pub(super) const MAX_PER_USER: u64 = 8;

impl Default for BackgroundTasks {
    fn default() -> Self {
        Self {
            boot: oxiscope_storage::new_id(),
            running: Mutex::new(HashMap::new()),
        }
    }
}

impl BackgroundTasks {
    /// This process's id in the rows it owns.
    pub fn boot(&self) -> &str {
        &self.boot
    }

    fn running(&self) -> MutexGuard<'_, HashMap<String, Running>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Cancels the background calls of `session_id` running in this process;
/// returns how many. Each is delivered as interrupted.
pub fn cancel_session(state: &Engine, session_id: &str) -> usize {
    let running = state.background().running();
    let mut cancelled = 0;
    for task in running.values().filter(|t| t.session_id == session_id) {
        task.cancel.cancel();
        cancelled += 1;
    }
    cancelled
}

/// Records the call of `job` as a background task and hands `tool` to a
/// watcher; returns the task id. When the task cannot be recorded, the
/// stream and output come back (the call is not offloaded).
pub(super) async fn offload(
    job: &Job,
    tool: ToolStream,
    output: Output,
) -> Result<String, (ToolStream, Output)> {
    let state = &job.state;
    let task = BackgroundTaskRecord::start(
        &job.user_id,
        &job.session_id,
        &job.call.name,
        &job.call.id,
        state.background().boot(),
    );
    // Counted (in the store, across replicas) and recorded under the
    // user's lease, so concurrent calls cannot pass the limit together.
    let recorded = crate::lease::under(
        state,
        &format!("background-of:{}", job.user_id),
        "the user's background calls are busy",
        async {
            let storage = state.storage();
            let running = storage.count_running_background_tasks(&job.user_id).await?;
            if running >= MAX_PER_USER {
                return Ok(false);
            }
            storage.create_background_task(&task).await?;
            Ok::<_, SessionError>(true)
        },
    )
    .await;
    match recorded {
        Ok(true) => {}
        Ok(false) => {
            tracing::info!(
                session_id = job.session_id,
                call_id = job.call.id.as_str(),
                "the user has {MAX_PER_USER} background calls; this one stays in the reply"
            );
            return Err((tool, output));
        }
        Err(e) => {
            tracing::warn!(session_id = job.session_id, call_id = job.call.id.as_str(), error = %e, "cannot record a background task; the call stays in the reply");
            return Err((tool, output));
        }
    }
    state.background().running().insert(
        task.id.clone(),
        Running {
            session_id: job.session_id.clone(),
            cancel: job.cancel.clone(),
        },
    );
    tracing::info!(
        session_id = job.session_id,
        task_id = task.id,
        tool = job.call.name,
        "a tool call moved to the background"
    );
    let id = task.id.clone();
    let watcher_state = state.clone();
    let cancel = job.cancel.clone();
    tokio::spawn(async move {
        let stop = watcher_state.shutdown_token().clone();
        tokio::select! {
            // A shutdown drops the call; the row stays `running` and the
            // next start reports it lost (see `abandon`).
            () = stop.cancelled() => {}
            () = watch(&watcher_state, &task, tool, output, cancel) => {}
        }
        watcher_state.background().running().remove(&task.id);
    });
    Ok(id)
}

/// Drives the call to its end (or its cancellation), stores the outcome,
/// then delivers it.
async fn watch(
    state: &Engine,
    task: &BackgroundTaskRecord,
    mut tool: ToolStream,
    mut output: Output,
    cancel: CancellationToken,
) {
    let mut ended = ToolResultState::Running;
    loop {
        let chunk = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                ended = ToolResultState::Interrupted;
                break;
            }
            chunk = tool.next() => chunk,
        };
        let Some(chunk) = chunk else { break };
        output.push(&chunk);
        if ended != ToolResultState::Error {
            ended = chunk.state;
        }
        if chunk.is_last {
            break;
        }
    }
    drop(tool);
    let ended = match ended {
        ToolResultState::Running | ToolResultState::Success if !output.error => {
            ToolResultState::Success
        }
        ToolResultState::Interrupted => ToolResultState::Interrupted,
        _ => ToolResultState::Error,
    };
    let stored = if ended == ToolResultState::Success {
        BackgroundTaskState::Done
    } else {
        BackgroundTaskState::Failed
    };
    let result = json!({"state": state_name(ended), "output": output.text()}).to_string();
    match state
        .storage()
        .finish_background_task(&task.id, stored, &result)
        .await
    {
        Ok(true) => {}
        Ok(false) => {
            // Taken over as lost (this process looked dead): the session
            // was told already.
            tracing::warn!(
                task_id = task.id,
                "a background task ended after it was reported lost"
            );
            return;
        }
        Err(e) => {
            // Delivered all the same: a result the store refused is better
            // handed over once than lost.
            tracing::error!(task_id = task.id, error = %e, "cannot store a background task's result");
        }
    }
    let mut finished = task.clone();
    finished.state = stored;
    finished.result = Some(result);
    deliver(state, &finished).await;
}

/// `success`, `error`, `interrupted`.
fn state_name(state: ToolResultState) -> &'static str {
    match state {
        ToolResultState::Success => "success",
        ToolResultState::Interrupted => "interrupted",
        ToolResultState::Running => "running",
        _ => "error",
    }
}

/// The hint that tells the session how `task` ended.
pub(crate) fn hint(task: &BackgroundTaskRecord) -> HintBlock {
    let source = json!({
        "type": "background_task",
        "task_id": task.id,
        "tool": task.tool_name,
        "tool_call_id": task.tool_call_id,
        "state": task.state.as_str(),
    })
    .to_string();
    let call = format!("{} ({})", task.tool_name, task.tool_call_id);
    let text = match task.state {
        BackgroundTaskState::Lost | BackgroundTaskState::Running => format!(
            "[Background task {id}] The tool call {call} that was running in the background was \
             cut off by a server restart before it finished; its effects are unknown. Check \
             them, and run the call again if it is still needed.",
            id = task.id,
        ),
        BackgroundTaskState::Done | BackgroundTaskState::Failed => {
            let result: Value = task
                .result
                .as_deref()
                .and_then(|r| serde_json::from_str(r).ok())
                .unwrap_or(Value::Null);
            let how = result.get("state").and_then(Value::as_str).unwrap_or(
                if task.state == BackgroundTaskState::Done {
                    "success"
                } else {
                    "error"
                },
            );
            let output = result.get("output").and_then(Value::as_str).unwrap_or("");
            format!(
                "[Background task {id}] The tool call {call} that was moved to the background \
                 has finished with state {how}. Its output:\n{output}",
                id = task.id,
            )
        }
    };
    HintBlock::new(text, Some(source))
}

/// Delivers `task`'s outcome to its session, retrying a few times (a full
/// inbox, a storage hiccup), then marks it delivered. A session that is
/// gone counts as delivered. After the last try the row stays undelivered
/// until a process that takes it over (after this one stops) delivers it.
pub(crate) async fn deliver(state: &Engine, task: &BackgroundTaskRecord) {
    let mut wait = Duration::from_millis(500);
    for attempt in 1..=5 {
        let sent = super::super::deliver::keep_hint(
            state,
            &task.user_id,
            &task.session_id,
            SENDER,
            hint(task),
        )
        .await;
        match sent {
            Ok(()) | Err(SessionError::NotFound(_)) => {
                if let Err(e) = state
                    .storage()
                    .mark_background_task_delivered(&task.id)
                    .await
                {
                    tracing::warn!(task_id = task.id, error = %e, "cannot mark a background task delivered");
                }
                return;
            }
            Err(e) => {
                tracing::warn!(task_id = task.id, attempt, error = %e, "delivering a background task's result failed");
            }
        }
        tokio::select! {
            () = state.shutdown_token().cancelled() => return,
            () = tokio::time::sleep(wait) => {}
        }
        wait *= 2;
    }
}

/// Takes over the undelivered background tasks of processes that died
/// (heartbeat older than `lock_ttl`): running ones become lost and their
/// sessions are told; finished ones are delivered (both in the
/// background). Returns how many tasks this process took over.
///
/// # Errors
/// The store cannot be read; a failure on one task is logged.
pub async fn recover(state: &Engine) -> Result<usize, oxiscope_storage::Error> {
    let boot = state.background().boot().to_owned();
    let ttl = i64::try_from(state.config().lock_ttl.as_millis()).unwrap_or(i64::MAX);
    let stale_before = epoch_millis().saturating_sub(ttl);
    let stale = state
        .storage()
        .stale_background_tasks(&boot, stale_before, RECOVER_BATCH)
        .await?;
    let mut taken = 0;
    for mut task in stale {
        match state
            .storage()
            .claim_background_task(&task, &boot, epoch_millis())
            .await
        {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                tracing::warn!(task_id = task.id, error = %e, "cannot take over a background task");
                continue;
            }
        }
        if task.state == BackgroundTaskState::Running {
            task.state = BackgroundTaskState::Lost;
            tracing::warn!(
                task_id = task.id,
                session_id = task.session_id,
                "a background tool call was cut off by a restart"
            );
        }
        taken += 1;
        // Delivered in the background: a slow delivery (retries) must not
        // hold up the keeper's heartbeats.
        let state = state.clone();
        tokio::spawn(async move { deliver(&state, &task).await });
    }
    Ok(taken)
}

/// Gives up this process's background tasks at shutdown: their
/// heartbeats are zeroed, so the next start (or another replica) takes
/// them over at once instead of after `lock_ttl`.
pub async fn abandon(state: &Engine) {
    let boot = state.background().boot();
    if let Err(e) = state.storage().heartbeat_background_tasks(boot, 0).await {
        tracing::warn!(error = %e, "cannot hand over the background tasks");
    }
}

/// Every `takeover_interval` until shutdown: refreshes the heartbeat of
/// this process's tasks, takes over those of dead processes, and deletes
/// tasks delivered more than [`KEEP_DELIVERED_DAYS`] days ago.
pub fn spawn_keeper(state: Engine) -> JoinHandle<()> {
    let every = state.config().takeover_interval;
    super::super::spawn_periodic(state, every, |state| async move { keep(&state).await })
}

/// One pass of the keeper.
pub(crate) async fn keep(state: &Engine) {
    let storage = state.storage();
    if let Err(e) = storage
        .heartbeat_background_tasks(state.background().boot(), epoch_millis())
        .await
    {
        tracing::warn!(error = %e, "refreshing the background tasks' heartbeat failed");
    }
    if let Err(e) = recover(state).await {
        tracing::warn!(error = %e, "taking over background tasks failed");
    }
    let cut = chrono::Local::now().naive_local() - chrono::Duration::days(KEEP_DELIVERED_DAYS);
    let cut = cut.format("%Y-%m-%dT%H:%M:%S%.6f").to_string();
    if let Err(e) = storage.prune_background_tasks(&cut).await {
        tracing::warn!(error = %e, "deleting old background tasks failed");
    }
}
