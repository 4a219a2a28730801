//! [`BackgroundTaskRecord`]: a tool call the service moved to the
//! background, kept so that its result is not lost on a restart; and the
//! SQL both backends run for them ([`background_sql!`] writes the same
//! inherent methods for each, statements written for PostgreSQL).
//!
//! A row is written when the call is offloaded (`running`), updated with
//! the result when the call ends (`done` / `failed`) *before* the result
//! is delivered to the session, and marked `delivered_at` once it is. The
//! process running the call is the row's `owner`, which refreshes
//! `heartbeat_at` (milliseconds since the Unix epoch) while the row is
//! undelivered. A row whose heartbeat went stale belongs to a process
//! that died: any process may take it over atomically
//! ([`Storage::claim_background_task`](crate::Storage::claim_background_task)),
//! which turns a `running` row into `lost`.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::rows::Columns;

/// Where a background task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundTaskState {
    /// The call is still executing in its owner's process.
    Running,
    /// The call finished successfully; `result` holds its output.
    Done,
    /// The call finished with an error or was interrupted; `result` says
    /// how.
    Failed,
    /// The process running the call stopped before it finished.
    Lost,
}

impl BackgroundTaskState {
    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Lost => "lost",
        }
    }

    /// Reads a stored spelling.
    ///
    /// # Errors
    /// [`crate::Error::Json`] for a spelling this version does not know.
    pub fn parse(text: &str) -> Result<Self> {
        Ok(serde_json::from_value(serde_json::Value::String(
            text.to_owned(),
        ))?)
    }
}

/// A tool call running (or run) in the background for a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundTaskRecord {
    /// The task id.
    pub id: String,
    /// The session's owner.
    pub user_id: String,
    /// The session the result goes to.
    pub session_id: String,
    /// The tool called.
    pub tool_name: String,
    /// The model's id of the call.
    pub tool_call_id: String,
    /// Where the task is.
    pub state: BackgroundTaskState,
    /// The call's (capped) output, once it ended.
    pub result: Option<String>,
    /// The process that runs (or delivers) the task.
    pub owner: String,
    /// When the owner last showed it is alive, in milliseconds since the
    /// Unix epoch.
    pub heartbeat_at: i64,
    /// When the call was offloaded.
    pub created_at: String,
    /// When it ended (or was found lost).
    pub finished_at: Option<String>,
    /// When its outcome was handed to the session.
    pub delivered_at: Option<String>,
}

impl BackgroundTaskRecord {
    /// A task that starts now, run by `owner`.
    #[must_use]
    pub fn start(
        user_id: &str,
        session_id: &str,
        tool_name: &str,
        tool_call_id: &str,
        owner: &str,
    ) -> Self {
        Self {
            id: crate::record::new_id(),
            user_id: user_id.to_owned(),
            session_id: session_id.to_owned(),
            tool_name: tool_name.to_owned(),
            tool_call_id: tool_call_id.to_owned(),
            state: BackgroundTaskState::Running,
            result: None,
            owner: owner.to_owned(),
            heartbeat_at: epoch_millis(),
            created_at: crate::record::now(),
            finished_at: None,
            delivered_at: None,
        }
    }
}

/// Milliseconds since the Unix epoch (the heartbeat clock).
#[must_use]
pub fn epoch_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The table's columns, in the order rows are read.
pub(crate) const COLUMNS: &str = "id, user_id, session_id, tool_name, tool_call_id, state, \
                                  result, owner, heartbeat_at, created_at, finished_at, \
                                  delivered_at";

/// A task from a row.
pub(crate) fn background_row(row: &impl Columns) -> Result<BackgroundTaskRecord> {
    Ok(BackgroundTaskRecord {
        id: row.text("id")?,
        user_id: row.text("user_id")?,
        session_id: row.text("session_id")?,
        tool_name: row.text("tool_name")?,
        tool_call_id: row.text("tool_call_id")?,
        state: BackgroundTaskState::parse(&row.text("state")?)?,
        result: row.opt_text("result")?,
        owner: row.text("owner")?,
        heartbeat_at: row.int("heartbeat_at")?,
        created_at: row.text("created_at")?,
        finished_at: row.opt_text("finished_at")?,
        delivered_at: row.opt_text("delivered_at")?,
    })
}

/// The background-task methods of a SQL backend `$backend` (whose `pool`
/// field is visible where the macro is used); `$spell` turns a statement
/// with `$n` placeholders into the backend's spelling.
macro_rules! background_sql {
    ($backend:ty, $spell:expr) => {
        const _: () = {
            use $crate::background::{
                BackgroundTaskRecord, BackgroundTaskState, COLUMNS, background_row,
            };
            use $crate::error::Result;
            use $crate::record::now;

            fn sql(statement: &str) -> String {
                let spell: fn(&str) -> String = $spell;
                spell(statement)
            }

            impl $backend {
                pub(super) async fn background_insert(
                    &self,
                    t: &BackgroundTaskRecord,
                ) -> Result<()> {
                    sqlx::query(&sql(&format!(
                        "INSERT INTO background_tasks ({COLUMNS}) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
                    )))
                    .bind(&t.id)
                    .bind(&t.user_id)
                    .bind(&t.session_id)
                    .bind(&t.tool_name)
                    .bind(&t.tool_call_id)
                    .bind(t.state.as_str())
                    .bind(t.result.as_deref())
                    .bind(&t.owner)
                    .bind(t.heartbeat_at)
                    .bind(&t.created_at)
                    .bind(t.finished_at.as_deref())
                    .bind(t.delivered_at.as_deref())
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                pub(super) async fn background_finish(
                    &self,
                    id: &str,
                    state: BackgroundTaskState,
                    result: &str,
                ) -> Result<bool> {
                    let done = sqlx::query(&sql(
                        "UPDATE background_tasks SET state = $1, result = $2, finished_at = $3 \
                         WHERE id = $4 AND state = 'running'",
                    ))
                    .bind(state.as_str())
                    .bind(result)
                    .bind(now())
                    .bind(id)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() == 1)
                }

                pub(super) async fn background_delivered(&self, id: &str) -> Result<bool> {
                    let done = sqlx::query(&sql("UPDATE background_tasks SET delivered_at = $1 \
                         WHERE id = $2 AND delivered_at IS NULL"))
                    .bind(now())
                    .bind(id)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() == 1)
                }

                pub(super) async fn background_heartbeat(
                    &self,
                    owner: &str,
                    at: i64,
                ) -> Result<u64> {
                    let done = sqlx::query(&sql("UPDATE background_tasks SET heartbeat_at = $1 \
                         WHERE owner = $2 AND delivered_at IS NULL"))
                    .bind(at)
                    .bind(owner)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected())
                }

                pub(super) async fn background_stale(
                    &self,
                    owner: &str,
                    stale_before: i64,
                    limit: u32,
                ) -> Result<Vec<BackgroundTaskRecord>> {
                    let rows = sqlx::query(&sql(&format!(
                        "SELECT {COLUMNS} FROM background_tasks \
                         WHERE delivered_at IS NULL AND owner <> $1 AND heartbeat_at < $2 \
                         ORDER BY created_at, id LIMIT $3"
                    )))
                    .bind(owner)
                    .bind(stale_before)
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(background_row).collect()
                }

                pub(super) async fn background_claim(
                    &self,
                    task: &BackgroundTaskRecord,
                    owner: &str,
                    at: i64,
                ) -> Result<bool> {
                    let done = sqlx::query(&sql(
                        "UPDATE background_tasks SET owner = $1, heartbeat_at = $2, \
                         state = CASE WHEN state = 'running' THEN 'lost' ELSE state END, \
                         finished_at = COALESCE(finished_at, $3) \
                         WHERE id = $4 AND owner = $5 AND heartbeat_at = $6 \
                         AND delivered_at IS NULL",
                    ))
                    .bind(owner)
                    .bind(at)
                    .bind(now())
                    .bind(&task.id)
                    .bind(&task.owner)
                    .bind(task.heartbeat_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() == 1)
                }

                pub(super) async fn background_list(
                    &self,
                    session_id: &str,
                ) -> Result<Vec<BackgroundTaskRecord>> {
                    let rows = sqlx::query(&sql(&format!(
                        "SELECT {COLUMNS} FROM background_tasks WHERE session_id = $1 \
                         ORDER BY created_at, id"
                    )))
                    .bind(session_id)
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(background_row).collect()
                }

                pub(super) async fn background_running_of(&self, user: &str) -> Result<u64> {
                    let count: i64 = sqlx::query_scalar(&sql(
                        "SELECT COUNT(*) FROM background_tasks WHERE user_id = $1 \
                         AND state = 'running'",
                    ))
                    .bind(user)
                    .fetch_one(&self.pool)
                    .await?;
                    Ok(u64::try_from(count).unwrap_or(0))
                }

                pub(super) async fn background_prune(&self, delivered_before: &str) -> Result<u64> {
                    let done = sqlx::query(&sql(
                        "DELETE FROM background_tasks WHERE delivered_at IS NOT NULL \
                         AND delivered_at < $1",
                    ))
                    .bind(delivered_before)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected())
                }
            }
        };
    };
}
pub(crate) use background_sql;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_and_unknown_ones_are_errors() {
        for state in [
            BackgroundTaskState::Running,
            BackgroundTaskState::Done,
            BackgroundTaskState::Failed,
            BackgroundTaskState::Lost,
        ] {
            assert_eq!(BackgroundTaskState::parse(state.as_str()).ok(), Some(state));
        }
        assert!(BackgroundTaskState::parse("exploded").is_err());
    }
}
