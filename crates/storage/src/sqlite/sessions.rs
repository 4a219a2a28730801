//! Sessions, their state revisions, and their messages.

use serde_json::Value;

use super::SqliteStorage;
use crate::error::Result;
use crate::params;
use crate::record::{MessagePage, SessionRecord, now};
use crate::rows::{page, session};

impl SqliteStorage {
    pub(super) async fn session_insert(&self, s: &SessionRecord) -> Result<()> {
        let sql = crate::sql_storage::sqlite_spelling(&params::insert(
            "sessions",
            &params::SESSION_COLUMNS,
        ));
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
            " FROM sessions WHERE user_id = ? AND id = ?"
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
            " FROM sessions WHERE user_id = ? AND agent_id = ? AND workspace_id = ? \
             ORDER BY created_at LIMIT 1"
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
            " FROM sessions WHERE user_id = ? AND agent_id = ? \
             ORDER BY updated_at DESC, id"
        ))
        .bind(user)
        .bind(agent)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(session).collect()
    }

    pub(super) async fn session_count(&self, user: &str) -> Result<u64> {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions WHERE user_id = ?")
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
            "UPDATE sessions SET config = ?, updated_at = ? WHERE user_id = ? AND id = ?",
        )
        .bind(config.to_string())
        .bind(now())
        .bind(user)
        .bind(id)
        .execute(&self.pool)
        .await?;
        crate::rows::found(done.rows_affected(), "session", id)
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
        let next = params::next_revision(session_id, expected, found)?;
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
        page(&rows, limit)
    }
}
