//! [`ToolCallRecord`]: one entry of the tool-call journal.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most bytes of a finished call's result the journal keeps; a longer
/// result is cut (at a character boundary) and marked.
pub const RESULT_LIMIT: usize = 4096;

/// One tool call a run executed: written when the tool starts, completed
/// when it finishes. A call with a start and no finish, found after its
/// runner died, is *in doubt*: it may or may not have had its effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// `<session>:<reply>:<call id>`: the same call of the same reply has
    /// one entry whoever starts it.
    pub idempotency_key: String,
    /// The session.
    pub session_id: String,
    /// The reply that made the call.
    pub reply_id: String,
    /// The model's id of the call.
    pub call_id: String,
    /// The tool.
    pub tool_name: String,
    /// When the tool started.
    pub started_at: String,
    /// When it finished; `None` while running (or in doubt).
    pub finished_at: Option<String>,
    /// How it finished (JSON, at most [`RESULT_LIMIT`] bytes of text).
    pub result: Option<Value>,
}

impl ToolCallRecord {
    /// A call that starts now.
    #[must_use]
    pub fn start(session_id: &str, reply_id: &str, call_id: &str, tool_name: &str) -> Self {
        Self {
            idempotency_key: Self::key(session_id, reply_id, call_id),
            session_id: session_id.to_owned(),
            reply_id: reply_id.to_owned(),
            call_id: call_id.to_owned(),
            tool_name: tool_name.to_owned(),
            started_at: crate::record::now(),
            finished_at: None,
            result: None,
        }
    }

    /// The idempotency key of a call.
    #[must_use]
    pub fn key(session_id: &str, reply_id: &str, call_id: &str) -> String {
        format!("{session_id}:{reply_id}:{call_id}")
    }

    /// Whether the call started and never finished.
    #[must_use]
    pub fn in_doubt(&self) -> bool {
        self.finished_at.is_none()
    }
}

/// `text` cut to at most `limit` bytes at a character boundary, with a
/// marker when cut.
#[must_use]
pub fn cap_text(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [cut]", &text[..end])
}

/// The stored form of a result: its JSON, capped at [`RESULT_LIMIT`]
/// (a longer one is kept as a cut string).
pub(crate) fn result_text(result: &Value) -> String {
    let text = result.to_string();
    if text.len() <= RESULT_LIMIT {
        return text;
    }
    Value::String(cap_text(&text, RESULT_LIMIT)).to_string()
}

/// The journal's columns, in the order rows are read.
pub(crate) const COLUMNS: &str =
    "idempotency_key, session_id, reply_id, call_id, tool_name, started_at, finished_at, result";

/// A journal row.
pub(crate) fn record(row: &impl crate::rows::Columns) -> crate::error::Result<ToolCallRecord> {
    let result = row
        .opt_text("result")?
        .map(|text| serde_json::from_str(&text))
        .transpose()?;
    Ok(ToolCallRecord {
        idempotency_key: row.text("idempotency_key")?,
        session_id: row.text("session_id")?,
        reply_id: row.text("reply_id")?,
        call_id: row.text("call_id")?,
        tool_name: row.text("tool_name")?,
        started_at: row.text("started_at")?,
        finished_at: row.opt_text("finished_at")?,
        result,
    })
}

/// The journal's statements for a SQL backend `$backend` (with a `pool`),
/// written for PostgreSQL and passed through `$spell` (the backend's
/// spelling of a statement).
macro_rules! journal_sql {
    ($backend:ty, $spell:expr) => {
        const _: () = {
            use serde_json::Value;

            use $crate::error::Result;
            use $crate::journal::{COLUMNS, ToolCallRecord, record, result_text};
            use $crate::record::now;

            fn sql(statement: &str) -> String {
                let spell: fn(&str) -> String = $spell;
                spell(statement)
            }

            impl $backend {
                pub(super) async fn tool_call_start(&self, call: &ToolCallRecord) -> Result<bool> {
                    let done = sqlx::query(&sql(
                        "INSERT INTO tool_calls (idempotency_key, session_id, reply_id, call_id, \
                         tool_name, started_at) VALUES ($1, $2, $3, $4, $5, $6) \
                         ON CONFLICT (idempotency_key) DO NOTHING",
                    ))
                    .bind(&call.idempotency_key)
                    .bind(&call.session_id)
                    .bind(&call.reply_id)
                    .bind(&call.call_id)
                    .bind(&call.tool_name)
                    .bind(&call.started_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() == 1)
                }

                pub(super) async fn tool_call_finish(
                    &self,
                    key: &str,
                    result: &Value,
                ) -> Result<bool> {
                    let done =
                        sqlx::query(&sql("UPDATE tool_calls SET finished_at = $1, result = $2 \
                         WHERE idempotency_key = $3 AND finished_at IS NULL"))
                        .bind(now())
                        .bind(result_text(result))
                        .bind(key)
                        .execute(&self.pool)
                        .await?;
                    Ok(done.rows_affected() == 1)
                }

                pub(super) async fn tool_call_list(
                    &self,
                    session_id: &str,
                ) -> Result<Vec<ToolCallRecord>> {
                    let rows = sqlx::query(&sql(&format!(
                        "SELECT {COLUMNS} FROM tool_calls WHERE session_id = $1 \
                         ORDER BY started_at, idempotency_key"
                    )))
                    .bind(session_id)
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(record).collect()
                }

                pub(super) async fn tool_call_clear(&self, session_id: &str) -> Result<u64> {
                    let done = sqlx::query(&sql("DELETE FROM tool_calls WHERE session_id = $1"))
                        .bind(session_id)
                        .execute(&self.pool)
                        .await?;
                    Ok(done.rows_affected())
                }
            }
        };
    };
}
pub(crate) use journal_sql;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_results_are_cut_at_a_character_boundary() {
        assert_eq!(cap_text("héllo", 2), "h… [cut]");
        assert_eq!(cap_text("short", 10), "short");
        let long = Value::String("é".repeat(RESULT_LIMIT));
        let stored = result_text(&long);
        assert!(stored.len() <= RESULT_LIMIT + 32);
        assert!(serde_json::from_str::<Value>(&stored).is_ok());
    }
}
