//! Sessions, their state revisions, and their messages.

use serde_json::Value;

use super::PostgresStorage;
use crate::error::Result;
use crate::params;
use crate::record::{MessagePage, SessionRecord, now};
use crate::rows::{page, session};

/// Sets `config.name` and turns automatic naming off, when it is on.
fn named(mut config: Value, name: &str) -> Option<Value> {
    let auto = config.pointer("/naming/auto") == Some(&Value::Bool(true));
    let object = config.as_object_mut().filter(|_| auto)?;
    object.insert("name".to_owned(), Value::from(name));
    object.insert("naming".to_owned(), serde_json::json!({"auto": false}));
    Some(config)
}

impl PostgresStorage {
    pub(super) async fn session_insert(&self, s: &SessionRecord) -> Result<()> {
        let sql = params::insert("sessions", &params::SESSION_COLUMNS);
        let key = format!("{}/{}/{}", s.user_id, s.agent_id, s.workspace_id);
        params::bind_session(sqlx::query(&sql), s)
            .execute(&self.pool)
            .await
            .map_err(params::clash("session", key))?;
        Ok(())
    }

    pub(super) async fn session_get(&self, user: &str, id: &str) -> Result<Option<SessionRecord>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            crate::columns::sessions!(),
            " FROM sessions WHERE user_id = $1 AND id = $2"
        ))
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
        let row = sqlx::query(concat!(
            "SELECT ",
            crate::columns::sessions!(),
            " FROM sessions WHERE user_id = $1 AND agent_id = $2 AND workspace_id = $3 \
             ORDER BY created_at COLLATE \"C\" LIMIT 1"
        ))
        .bind(user)
        .bind(agent)
        .bind(workspace)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(session).transpose()
    }

    pub(super) async fn session_list(&self, user: &str, agent: &str) -> Result<Vec<SessionRecord>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            crate::columns::sessions!(),
            " FROM sessions WHERE user_id = $1 AND agent_id = $2 \
             ORDER BY updated_at COLLATE \"C\" DESC, id COLLATE \"C\""
        ))
        .bind(user)
        .bind(agent)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(session).collect()
    }

    pub(super) async fn session_count(&self, user: &str) -> Result<u64> {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions WHERE user_id = $1")
            .bind(user)
            .fetch_one(&self.pool)
            .await?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    pub(super) async fn session_update_config(
        &self,
        user: &str,
        id: &str,
        config: &Value,
    ) -> Result<()> {
        let done = sqlx::query(
            "UPDATE sessions SET config = $1, updated_at = $2 WHERE user_id = $3 AND id = $4",
        )
        .bind(config.to_string())
        .bind(now())
        .bind(user)
        .bind(id)
        .execute(&self.pool)
        .await?;
        crate::rows::found(done.rows_affected(), "session", id)
    }

    /// Reads the config under a row lock, so a concurrent config write
    /// either lands before (and is kept) or waits for this one.
    pub(super) async fn session_name_if_auto(
        &self,
        user: &str,
        id: &str,
        name: &str,
    ) -> Result<bool> {
        let mut tx = self.pool.begin().await?;
        let config: Option<String> = sqlx::query_scalar(
            "SELECT config FROM sessions WHERE user_id = $1 AND id = $2 FOR UPDATE",
        )
        .bind(user)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(config) = config else {
            return Ok(false);
        };
        let Some(config) = named(serde_json::from_str(&config)?, name) else {
            return Ok(false);
        };
        sqlx::query("UPDATE sessions SET config = $1, updated_at = $2 WHERE id = $3")
            .bind(config.to_string())
            .bind(now())
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    pub(super) async fn session_delete(&self, user: &str, id: &str) -> Result<bool> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND id = $2")
            .bind(user)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let deleted = done.rows_affected() > 0;
        if deleted {
            sqlx::query("DELETE FROM messages WHERE session_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(deleted)
    }

    /// The revision is read under a row lock: a concurrent commit of the
    /// same session waits, then finds the revision moved on.
    pub(super) async fn reply_commit(
        &self,
        session_id: &str,
        expected: i64,
        state: &Value,
        messages: &[Value],
    ) -> Result<i64> {
        let mut tx = self.pool.begin().await?;
        let found: Option<i64> =
            sqlx::query_scalar("SELECT revision FROM sessions WHERE id = $1 FOR UPDATE")
                .bind(session_id)
                .fetch_optional(&mut *tx)
                .await?;
        let next = params::next_revision(session_id, expected, found)?;
        for msg in messages {
            let id = msg.get("id").and_then(Value::as_str).unwrap_or_default();
            sqlx::query(
                "INSERT INTO messages (session_id, id, msg) VALUES ($1, $2, $3) \
                 ON CONFLICT (session_id, id) DO UPDATE SET msg = excluded.msg",
            )
            .bind(session_id)
            .bind(id)
            .bind(msg.to_string())
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query("UPDATE sessions SET state = $1, revision = $2, updated_at = $3 WHERE id = $4")
            .bind(state.to_string())
            .bind(next)
            .bind(now())
            .bind(session_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(next)
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
                let seq: Option<i64> = sqlx::query_scalar(
                    "SELECT seq FROM messages WHERE session_id = $1 AND id = $2",
                )
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
            "SELECT seq, id, msg FROM messages WHERE session_id = $1 AND seq < $2 \
             ORDER BY seq DESC LIMIT $3 OFFSET $4",
        )
        .bind(session_id)
        .bind(upper)
        .bind(i64::from(limit) + 1)
        .bind(i64::from(offset))
        .fetch_all(&self.pool)
        .await?;
        page(&rows, limit)
    }
}
