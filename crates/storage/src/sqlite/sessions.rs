//! Sessions, their state revisions, and their messages.

use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::SqliteStorage;
use crate::error::{Error, Result};
use crate::record::{MessagePage, SessionRecord, StoredMessage, now};

fn session(row: &SqliteRow) -> Result<SessionRecord> {
    let config: String = row.try_get("config")?;
    let state: String = row.try_get("state")?;
    Ok(SessionRecord {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        agent_id: row.try_get("agent_id")?,
        workspace_id: row.try_get("workspace_id")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        config: serde_json::from_str(&config)?,
        state: serde_json::from_str(&state)?,
        revision: row.try_get("revision")?,
    })
}

impl SqliteStorage {
    pub(super) async fn session_insert(&self, s: &SessionRecord) -> Result<()> {
        sqlx::query(
            "INSERT INTO sessions (id, user_id, agent_id, workspace_id, created_at, updated_at, \
             config, state, revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&s.id)
        .bind(&s.user_id)
        .bind(&s.agent_id)
        .bind(&s.workspace_id)
        .bind(&s.created_at)
        .bind(&s.updated_at)
        .bind(s.config.to_string())
        .bind(s.state.to_string())
        .bind(s.revision)
        .execute(&self.pool)
        .await
        .map_err(|e| match &e {
            sqlx::Error::Database(db) if db.is_unique_violation() => Error::AlreadyExists {
                kind: "session",
                key: format!("{}/{}/{}", s.user_id, s.agent_id, s.workspace_id),
            },
            _ => Error::Database(e),
        })?;
        Ok(())
    }

    pub(super) async fn session_get(&self, user: &str, id: &str) -> Result<Option<SessionRecord>> {
        let row = sqlx::query("SELECT * FROM sessions WHERE user_id = ? AND id = ?")
            .bind(user)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(session).transpose()
    }

    pub(super) async fn session_find(
        &self,
        user: &str,
        agent: &str,
        workspace: &str,
    ) -> Result<Option<SessionRecord>> {
        let row = sqlx::query(
            "SELECT * FROM sessions WHERE user_id = ? AND agent_id = ? AND workspace_id = ? \
             ORDER BY created_at LIMIT 1",
        )
        .bind(user)
        .bind(agent)
        .bind(workspace)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(session).transpose()
    }

    pub(super) async fn session_list(&self, user: &str, agent: &str) -> Result<Vec<SessionRecord>> {
        let rows = sqlx::query(
            "SELECT * FROM sessions WHERE user_id = ? AND agent_id = ? \
             ORDER BY updated_at DESC, id",
        )
        .bind(user)
        .bind(agent)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(session).collect()
    }

    pub(super) async fn session_update_config(
        &self,
        user: &str,
        id: &str,
        config: &Value,
    ) -> Result<()> {
        let done = sqlx::query(
            "UPDATE sessions SET config = ?, updated_at = ? WHERE user_id = ? AND id = ?",
        )
        .bind(config.to_string())
        .bind(now())
        .bind(user)
        .bind(id)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(Error::NotFound {
                kind: "session",
                id: id.to_owned(),
            });
        }
        Ok(())
    }

    pub(super) async fn session_name_if_auto(
        &self,
        user: &str,
        id: &str,
        name: &str,
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE sessions SET config = json_set(config, '$.name', ?, '$.naming', json('{\"auto\": false}')), \
             updated_at = ? \
             WHERE user_id = ? AND id = ? AND json_extract(config, '$.naming.auto') = 1",
        )
        .bind(name)
        .bind(now())
        .bind(user)
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    pub(super) async fn session_delete(&self, user: &str, id: &str) -> Result<bool> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let done = sqlx::query("DELETE FROM sessions WHERE user_id = ? AND id = ?")
            .bind(user)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() > 0 {
            sqlx::query("DELETE FROM messages WHERE session_id = ?")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }

    pub(super) async fn reply_commit(
        &self,
        session_id: &str,
        expected: i64,
        state: &Value,
        messages: &[Value],
    ) -> Result<i64> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let found: Option<i64> = sqlx::query_scalar("SELECT revision FROM sessions WHERE id = ?")
            .bind(session_id)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(found) = found else {
            return Err(Error::NotFound {
                kind: "session",
                id: session_id.to_owned(),
            });
        };
        if found != expected {
            return Err(Error::StaleRevision {
                session_id: session_id.to_owned(),
                expected,
                found,
            });
        }
        for msg in messages {
            let id = msg.get("id").and_then(Value::as_str).unwrap_or_default();
            sqlx::query(
                "INSERT INTO messages (session_id, id, msg) VALUES (?, ?, ?) \
                 ON CONFLICT (session_id, id) DO UPDATE SET msg = excluded.msg",
            )
            .bind(session_id)
            .bind(id)
            .bind(msg.to_string())
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query("UPDATE sessions SET state = ?, revision = ?, updated_at = ? WHERE id = ?")
            .bind(state.to_string())
            .bind(found + 1)
            .bind(now())
            .bind(session_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(found + 1)
    }

    pub(super) async fn message_page(
        &self,
        session_id: &str,
        before: Option<&str>,
        offset: u32,
        limit: u32,
    ) -> Result<MessagePage> {
        let upper: i64 = match before {
            Some(id) => {
                let seq: Option<i64> =
                    sqlx::query_scalar("SELECT seq FROM messages WHERE session_id = ? AND id = ?")
                        .bind(session_id)
                        .bind(id)
                        .fetch_optional(&self.pool)
                        .await?;
                match seq {
                    Some(seq) => seq,
                    None => return Ok(MessagePage::default()),
                }
            }
            None => i64::MAX,
        };
        let rows = sqlx::query(
            "SELECT seq, id, msg FROM messages WHERE session_id = ? AND seq < ? \
             ORDER BY seq DESC LIMIT ? OFFSET ?",
        )
        .bind(session_id)
        .bind(upper)
        .bind(i64::from(limit) + 1)
        .bind(i64::from(offset))
        .fetch_all(&self.pool)
        .await?;
        let mut messages = rows
            .iter()
            .map(|r| {
                let text: String = r.try_get("msg")?;
                Ok(StoredMessage {
                    seq: r.try_get("seq")?,
                    id: r.try_get("id")?,
                    msg: serde_json::from_str(&text)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let has_more = messages.len() > limit as usize;
        messages.truncate(limit as usize);
        Ok(MessagePage { messages, has_more })
    }
}
