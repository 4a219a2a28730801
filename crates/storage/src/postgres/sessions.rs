//! Sessions, their state revisions, and their messages on PostgreSQL (the
//! shared statements of [`crate::session_sql`], as they are), and naming
//! a session under a row lock.

use serde_json::Value;

use super::PostgresStorage;
use crate::error::Result;
use crate::record::now;

crate::session_sql::session_sql!(PostgresStorage, str::to_owned);

/// Sets `config.name` and turns automatic naming off, when it is on.
fn named(mut config: Value, name: &str) -> Option<Value> {
    let auto = config.pointer("/naming/auto") == Some(&Value::Bool(true));
    let object = config.as_object_mut().filter(|_| auto)?;
    object.insert("name".to_owned(), Value::from(name));
    object.insert("naming".to_owned(), serde_json::json!({"auto": false}));
    Some(config)
}

impl PostgresStorage {
    /// Reads the config under a row lock, so a concurrent config write
    /// either lands before (and is kept) or waits for this one.
    pub(super) async fn session_name_if_auto(
        &self,
        user: &str,
        id: &str,
        name: &str,
    ) -> Result<bool> {
        let mut tx = self.write_tx().await?;
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
}
