//! Agents, credentials, schedules and API keys: owner-scoped documents.

use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::SqliteStorage;
use crate::error::{Error, Result};
use crate::record::{AgentRecord, ApiKeyRecord, CredentialRecord, ScheduleRecord};

fn json(text: &str) -> Result<Value> {
    Ok(serde_json::from_str(text)?)
}

fn agent(row: &SqliteRow) -> Result<AgentRecord> {
    Ok(AgentRecord {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        data: json(row.try_get("data")?)?,
    })
}

fn credential(row: &SqliteRow) -> Result<CredentialRecord> {
    Ok(CredentialRecord {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        sealed: row.try_get("sealed")?,
    })
}

fn schedule(row: &SqliteRow) -> Result<ScheduleRecord> {
    Ok(ScheduleRecord {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        data: json(row.try_get("data")?)?,
    })
}

impl SqliteStorage {
    pub(super) async fn ping_db(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    pub(super) async fn agent_insert(&self, a: &AgentRecord) -> Result<()> {
        sqlx::query(
            "INSERT INTO agents (id, user_id, created_at, updated_at, data) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(&a.id)
        .bind(&a.user_id)
        .bind(&a.created_at)
        .bind(&a.updated_at)
        .bind(a.data.to_string())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(super) async fn agent_get(&self, user: &str, id: &str) -> Result<Option<AgentRecord>> {
        let row = sqlx::query("SELECT * FROM agents WHERE user_id = ? AND id = ?")
            .bind(user)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(agent).transpose()
    }

    pub(super) async fn agent_list(&self, user: &str) -> Result<Vec<AgentRecord>> {
        let rows = sqlx::query("SELECT * FROM agents WHERE user_id = ? ORDER BY created_at, id")
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
        if done.rows_affected() == 0 {
            return Err(Error::NotFound {
                kind: "agent",
                id: a.id.clone(),
            });
        }
        Ok(())
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

    pub(super) async fn delete_owned(&self, table: Table, user: &str, id: &str) -> Result<bool> {
        let sql = match table {
            Table::Credentials => "DELETE FROM credentials WHERE user_id = ? AND id = ?",
            Table::Schedules => "DELETE FROM schedules WHERE user_id = ? AND id = ?",
        };
        let done = sqlx::query(sql)
            .bind(user)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    pub(super) async fn credential_insert(&self, c: &CredentialRecord) -> Result<()> {
        sqlx::query(
            "INSERT INTO credentials (id, user_id, created_at, updated_at, sealed) \
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(&c.id)
        .bind(&c.user_id)
        .bind(&c.created_at)
        .bind(&c.updated_at)
        .bind(&c.sealed)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(super) async fn credential_get(
        &self,
        user: &str,
        id: &str,
    ) -> Result<Option<CredentialRecord>> {
        let row = sqlx::query("SELECT * FROM credentials WHERE user_id = ? AND id = ?")
            .bind(user)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(credential).transpose()
    }

    pub(super) async fn credential_list(&self, user: &str) -> Result<Vec<CredentialRecord>> {
        let rows =
            sqlx::query("SELECT * FROM credentials WHERE user_id = ? ORDER BY created_at, id")
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
        if done.rows_affected() == 0 {
            return Err(Error::NotFound {
                kind: "credential",
                id: c.id.clone(),
            });
        }
        Ok(())
    }

    pub(super) async fn schedule_insert(&self, s: &ScheduleRecord) -> Result<()> {
        sqlx::query(
            "INSERT INTO schedules (id, user_id, created_at, updated_at, data) \
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(&s.id)
        .bind(&s.user_id)
        .bind(&s.created_at)
        .bind(&s.updated_at)
        .bind(s.data.to_string())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(super) async fn schedule_list(&self, user: &str) -> Result<Vec<ScheduleRecord>> {
        let rows = sqlx::query("SELECT * FROM schedules WHERE user_id = ? ORDER BY created_at, id")
            .bind(user)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(schedule).collect()
    }

    pub(super) async fn api_key_insert(&self, k: &ApiKeyRecord) -> Result<()> {
        sqlx::query("INSERT INTO api_keys (hash, user_id, label, created_at) VALUES (?, ?, ?, ?)")
            .bind(&k.hash)
            .bind(&k.user_id)
            .bind(&k.label)
            .bind(&k.created_at)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub(super) async fn api_key_find(&self, hash: &str) -> Result<Option<ApiKeyRecord>> {
        let row = sqlx::query("SELECT * FROM api_keys WHERE hash = ?")
            .bind(hash)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| {
            Ok(ApiKeyRecord {
                hash: r.try_get("hash")?,
                user_id: r.try_get("user_id")?,
                label: r.try_get("label")?,
                created_at: r.try_get("created_at")?,
            })
        })
        .transpose()
    }
}

/// The owner-scoped tables a plain delete works on (agents take their
/// sessions along: [`SqliteStorage::agent_delete_cascade`]).
#[derive(Debug, Clone, Copy)]
pub(super) enum Table {
    Credentials,
    Schedules,
}
