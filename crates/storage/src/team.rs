//! Agent teams: the team record, and the SQL both backends run for teams
//! and for a session's team ([`team_sql!`] writes the same inherent
//! methods for each; the statements are written with `$n` placeholders,
//! which SQLite reads as `?n`).
//!
//! A team is led by one session (its `session_id`); which team a session
//! takes part in — as leader or member — is the session row's `team_id`
//! column (migration 0008). The roster lives in the team's `data`
//! document (`name`, `description`, `member_ids`, `members`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::rows::Columns;

/// A team of agents owned by a user, led by one of the user's sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamRecord {
    /// The team id.
    pub id: String,
    /// The owner.
    pub user_id: String,
    /// The leader's session.
    pub session_id: String,
    /// The leader's agent, when known.
    pub leader_agent_id: Option<String>,
    /// The team document (`name`, `description`, `member_ids`, `members`).
    pub data: Value,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
}

/// A team from a row.
pub(crate) fn team_row(row: &impl Columns) -> Result<TeamRecord> {
    Ok(TeamRecord {
        id: row.text("id")?,
        user_id: row.text("user_id")?,
        session_id: row.text("session_id")?,
        leader_agent_id: row.opt_text("leader_agent_id")?,
        data: row.json("data")?,
        created_at: row.text("created_at")?,
        updated_at: row.text("updated_at")?,
    })
}

/// The team methods of a SQL backend `$backend` (whose `pool` field is
/// visible where the macro is used); `$sql` turns a statement with `$n`
/// placeholders into the backend's spelling.
macro_rules! team_sql {
    ($backend:ty, $sql:expr) => {
        const _: () = {
            use $crate::error::Result;
            use $crate::team::{TeamRecord, team_row};

            fn sql(statement: &str) -> String {
                let spell: fn(&str) -> String = $sql;
                spell(statement)
            }

            impl $backend {
                pub(super) async fn team_insert(&self, t: &TeamRecord) -> Result<()> {
                    sqlx::query(&sql(
                        "INSERT INTO teams (id, user_id, session_id, leader_agent_id, data, \
                         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    ))
                    .bind(&t.id)
                    .bind(&t.user_id)
                    .bind(&t.session_id)
                    .bind(t.leader_agent_id.as_deref())
                    .bind(serde_json::to_string(&t.data)?)
                    .bind(&t.created_at)
                    .bind(&t.updated_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                pub(super) async fn team_get(
                    &self,
                    user: &str,
                    id: &str,
                ) -> Result<Option<TeamRecord>> {
                    let row = sqlx::query(&sql(concat!(
                        "SELECT ",
                        crate::columns::teams!(),
                        " FROM teams WHERE user_id = $1 AND id = $2"
                    )))
                    .bind(user)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(team_row).transpose()
                }

                pub(super) async fn team_update(&self, t: &TeamRecord) -> Result<()> {
                    let done = sqlx::query(&sql("UPDATE teams SET data = $1, updated_at = $2 \
                         WHERE user_id = $3 AND id = $4"))
                    .bind(serde_json::to_string(&t.data)?)
                    .bind(&t.updated_at)
                    .bind(&t.user_id)
                    .bind(&t.id)
                    .execute(&self.pool)
                    .await?;
                    crate::rows::found(done.rows_affected(), "team", &t.id)
                }

                pub(super) async fn team_delete(&self, user: &str, id: &str) -> Result<bool> {
                    let mut tx = self.pool.begin().await?;
                    sqlx::query(&sql(
                        "UPDATE sessions SET team_id = NULL WHERE user_id = $1 AND team_id = $2",
                    ))
                    .bind(user)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                    let done =
                        sqlx::query(&sql("DELETE FROM teams WHERE user_id = $1 AND id = $2"))
                            .bind(user)
                            .bind(id)
                            .execute(&mut *tx)
                            .await?;
                    tx.commit().await?;
                    Ok(done.rows_affected() > 0)
                }

                pub(super) async fn session_team_set(
                    &self,
                    user: &str,
                    session: &str,
                    team: Option<&str>,
                ) -> Result<bool> {
                    let done = sqlx::query(&sql(
                        "UPDATE sessions SET team_id = $1 WHERE user_id = $2 AND id = $3",
                    ))
                    .bind(team)
                    .bind(user)
                    .bind(session)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() > 0)
                }

                pub(super) async fn session_team_get(
                    &self,
                    user: &str,
                    session: &str,
                ) -> Result<Option<String>> {
                    let team: Option<Option<String>> = sqlx::query_scalar(&sql(
                        "SELECT team_id FROM sessions WHERE user_id = $1 AND id = $2",
                    ))
                    .bind(user)
                    .bind(session)
                    .fetch_optional(&self.pool)
                    .await?;
                    Ok(team.flatten())
                }
            }
        };
    };
}
pub(crate) use team_sql;
