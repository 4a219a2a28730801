//! Agents, credentials, schedules and API keys: owner-scoped documents.

use super::{SqliteStorage, param};
use crate::error::Result;
use crate::params::Document;
use crate::record::{AgentRecord, CredentialRecord, ScheduleRecord};
use crate::rows::{agent, credential, schedule};
use crate::sql_storage::OwnedTable;

impl SqliteStorage {
    pub(super) async fn ping_db(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn document_insert(&self, doc: Document<'_>) -> Result<()> {
        let sql = doc.insert_sql(param);
        doc.bind(sqlx::query(&sql)).execute(&self.pool).await?;
        Ok(())
    }

    pub(super) async fn agent_insert(&self, a: &AgentRecord) -> Result<()> {
        self.document_insert(Document {
            table: "agents",
            body_column: "data",
            fields: [&a.id, &a.user_id, &a.created_at, &a.updated_at],
            body: a.data.to_string(),
        })
        .await
    }

    pub(super) async fn agent_get(&self, user: &str, id: &str) -> Result<Option<AgentRecord>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            crate::columns::agents!(),
            " FROM agents WHERE user_id = ? AND id = ?"
        ))
        .bind(user)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(agent).transpose()
    }

    pub(super) async fn agent_list(&self, user: &str) -> Result<Vec<AgentRecord>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            crate::columns::agents!(),
            " FROM agents WHERE user_id = ? ORDER BY created_at, id"
        ))
        .bind(user)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(agent).collect()
    }

    pub(super) async fn agent_update(&self, a: &AgentRecord) -> Result<()> {
        let done =
            sqlx::query("UPDATE agents SET data = ?, updated_at = ? WHERE user_id = ? AND id = ?")
                .bind(a.data.to_string())
                .bind(&a.updated_at)
                .bind(&a.user_id)
                .bind(&a.id)
                .execute(&self.pool)
                .await?;
        crate::rows::found(done.rows_affected(), "agent", &a.id)
    }

    /// Deletes an agent with its sessions and their messages, in one
    /// transaction.
    pub(super) async fn agent_delete_cascade(&self, user: &str, id: &str) -> Result<bool> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let done = sqlx::query("DELETE FROM agents WHERE user_id = ? AND id = ?")
            .bind(user)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() > 0 {
            sqlx::query(
                "DELETE FROM messages WHERE session_id IN \
                 (SELECT id FROM sessions WHERE user_id = ? AND agent_id = ?)",
            )
            .bind(user)
            .bind(id)
            .execute(&mut *tx)
            .await?;
            sqlx::query("DELETE FROM sessions WHERE user_id = ? AND agent_id = ?")
                .bind(user)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }

    pub(super) async fn delete_owned(
        &self,
        table: OwnedTable,
        user: &str,
        id: &str,
    ) -> Result<bool> {
        let sql = match table {
            OwnedTable::Credentials => "DELETE FROM credentials WHERE user_id = ? AND id = ?",
            OwnedTable::Schedules => "DELETE FROM schedules WHERE user_id = ? AND id = ?",
        };
        let done = sqlx::query(sql)
            .bind(user)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    pub(super) async fn credential_insert(&self, c: &CredentialRecord) -> Result<()> {
        self.document_insert(Document {
            table: "credentials",
            body_column: "sealed",
            fields: [&c.id, &c.user_id, &c.created_at, &c.updated_at],
            body: c.sealed.clone(),
        })
        .await
    }

    pub(super) async fn credential_get(
        &self,
        user: &str,
        id: &str,
    ) -> Result<Option<CredentialRecord>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            crate::columns::credentials!(),
            " FROM credentials WHERE user_id = ? AND id = ?"
        ))
        .bind(user)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(credential).transpose()
    }

    pub(super) async fn credential_list(&self, user: &str) -> Result<Vec<CredentialRecord>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            crate::columns::credentials!(),
            " FROM credentials WHERE user_id = ? ORDER BY created_at, id"
        ))
        .bind(user)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(credential).collect()
    }

    pub(super) async fn credential_update(&self, c: &CredentialRecord) -> Result<()> {
        let done = sqlx::query(
            "UPDATE credentials SET sealed = ?, updated_at = ? WHERE user_id = ? AND id = ?",
        )
        .bind(&c.sealed)
        .bind(&c.updated_at)
        .bind(&c.user_id)
        .bind(&c.id)
        .execute(&self.pool)
        .await?;
        crate::rows::found(done.rows_affected(), "credential", &c.id)
    }

    pub(super) async fn schedule_list(&self, user: &str) -> Result<Vec<ScheduleRecord>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            crate::columns::schedules!(),
            " FROM schedules WHERE user_id = ? ORDER BY created_at, id"
        ))
        .bind(user)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(schedule).collect()
    }
}

crate::api_key_sql::api_key_sql!(SqliteStorage, crate::sql_storage::sqlite_spelling);
