//! Sessions, their state revisions, and their messages: one set of
//! statements for both SQL backends. Naming a session while its name is
//! automatic is each backend's own (`session_name_if_auto`): SQLite edits
//! the JSON in place, PostgreSQL reads it under a row lock.

/// The statements for `$backend` (with a `pool` and a `write_tx`, a
/// transaction whose reads lock what they read), written for PostgreSQL
/// and passed through `$spell` (the backend's spelling of a statement).
macro_rules! session_sql {
    ($backend:ty, $spell:expr) => {
        const _: () = {
            use serde_json::Value;

            use $crate::error::Result;
            use $crate::params;
            use $crate::record::{MessagePage, SessionRecord, now};
            use $crate::rows::{page, session};

            fn sql(statement: &str) -> String {
                let spell: fn(&str) -> String = $spell;
                spell(statement)
            }

            impl $backend {
                pub(super) async fn session_insert(&self, s: &SessionRecord) -> Result<()> {
                    let statement = sql(&params::insert("sessions", &params::SESSION_COLUMNS));
                    let key = format!("{}/{}/{}", s.user_id, s.agent_id, s.workspace_id);
                    params::bind_session(sqlx::query(&statement), s)
                        .execute(&self.pool)
                        .await
                        .map_err(params::clash("session", key))?;
                    Ok(())
                }

                pub(super) async fn session_get(
                    &self,
                    user: &str,
                    id: &str,
                ) -> Result<Option<SessionRecord>> {
                    const STATEMENT: &str = concat!(
                        "SELECT ",
                        crate::columns::sessions!(),
                        " FROM sessions WHERE user_id = $1 AND id = $2"
                    );
                    let row = self.owned_row(STATEMENT, user, id).await?;
                    row.as_ref().map(session).transpose()
                }

                pub(super) async fn session_find(
                    &self,
                    user: &str,
                    agent: &str,
                    workspace: &str,
                ) -> Result<Option<SessionRecord>> {
                    let row = sqlx::query(&sql(concat!(
                        "SELECT ",
                        crate::columns::sessions!(),
                        " FROM sessions WHERE user_id = $1 AND agent_id = $2 \
                         AND workspace_id = $3 ORDER BY created_at COLLATE \"C\" LIMIT 1"
                    )))
                    .bind(user)
                    .bind(agent)
                    .bind(workspace)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(session).transpose()
                }

                pub(super) async fn session_list(
                    &self,
                    user: &str,
                    agent: &str,
                ) -> Result<Vec<SessionRecord>> {
                    let rows = sqlx::query(&sql(concat!(
                        "SELECT ",
                        crate::columns::sessions!(),
                        " FROM sessions WHERE user_id = $1 AND agent_id = $2 \
                         ORDER BY updated_at COLLATE \"C\" DESC, id COLLATE \"C\""
                    )))
                    .bind(user)
                    .bind(agent)
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(session).collect()
                }

                pub(super) async fn session_count(&self, user: &str) -> Result<u64> {
                    let count: i64 = sqlx::query_scalar(&sql(
                        "SELECT COUNT(*) FROM sessions WHERE user_id = $1",
                    ))
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
                    let done =
                        sqlx::query(&sql("UPDATE sessions SET config = $1, updated_at = $2 \
                         WHERE user_id = $3 AND id = $4"))
                        .bind(config.to_string())
                        .bind(now())
                        .bind(user)
                        .bind(id)
                        .execute(&self.pool)
                        .await?;
                    crate::rows::found(done.rows_affected(), "session", id)
                }

                pub(super) async fn session_delete(&self, user: &str, id: &str) -> Result<bool> {
                    let mut tx = self.write_tx().await?;
                    let done =
                        sqlx::query(&sql("DELETE FROM sessions WHERE user_id = $1 AND id = $2"))
                            .bind(user)
                            .bind(id)
                            .execute(&mut *tx)
                            .await?;
                    let deleted = done.rows_affected() > 0;
                    if deleted {
                        sqlx::query(&sql("DELETE FROM messages WHERE session_id = $1"))
                            .bind(id)
                            .execute(&mut *tx)
                            .await?;
                    }
                    tx.commit().await?;
                    Ok(deleted)
                }

                /// The revision is read under a lock: a concurrent commit of
                /// the same session waits, then finds the revision moved on.
                pub(super) async fn reply_commit(
                    &self,
                    session_id: &str,
                    expected: i64,
                    state: &Value,
                    messages: &[Value],
                ) -> Result<i64> {
                    let mut tx = self.write_tx().await?;
                    let found: Option<i64> = sqlx::query_scalar(&sql(
                        "SELECT revision FROM sessions WHERE id = $1 FOR UPDATE",
                    ))
                    .bind(session_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                    let next = params::next_revision(session_id, expected, found)?;
                    let insert = sql("INSERT INTO messages (session_id, id, msg) \
                         VALUES ($1, $2, $3) \
                         ON CONFLICT (session_id, id) DO UPDATE SET msg = excluded.msg");
                    for msg in messages {
                        let id = msg.get("id").and_then(Value::as_str).unwrap_or_default();
                        sqlx::query(&insert)
                            .bind(session_id)
                            .bind(id)
                            .bind(msg.to_string())
                            .execute(&mut *tx)
                            .await?;
                    }
                    sqlx::query(&sql(
                        "UPDATE sessions SET state = $1, revision = $2, updated_at = $3 \
                         WHERE id = $4",
                    ))
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
                            let seq: Option<i64> = sqlx::query_scalar(&sql(
                                "SELECT seq FROM messages WHERE session_id = $1 AND id = $2",
                            ))
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
                    let rows = sqlx::query(&sql(
                        "SELECT seq, id, msg FROM messages WHERE session_id = $1 AND seq < $2 \
                         ORDER BY seq DESC LIMIT $3 OFFSET $4",
                    ))
                    .bind(session_id)
                    .bind(upper)
                    .bind(i64::from(limit) + 1)
                    .bind(i64::from(offset))
                    .fetch_all(&self.pool)
                    .await?;
                    page(&rows, limit)
                }
            }
        };
    };
}

pub(crate) use session_sql;
