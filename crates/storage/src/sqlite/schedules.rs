//! Schedules: the lookups the scheduler and the schedule routes need
//! beyond the owner-scoped insert, list and delete of `records.rs`.

use super::SqliteStorage;
use crate::error::{Error, Result};
use crate::record::ScheduleRecord;
use crate::rows::schedule;

impl SqliteStorage {
    pub(super) async fn schedule_get(
        &self,
        user: &str,
        id: &str,
    ) -> Result<Option<ScheduleRecord>> {
        let row = sqlx::query("SELECT * FROM schedules WHERE user_id = ? AND id = ?")
            .bind(user)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(schedule).transpose()
    }

    pub(super) async fn schedule_update(&self, s: &ScheduleRecord) -> Result<()> {
        let done = sqlx::query(
            "UPDATE schedules SET data = ?, updated_at = ? WHERE user_id = ? AND id = ?",
        )
        .bind(s.data.to_string())
        .bind(&s.updated_at)
        .bind(&s.user_id)
        .bind(&s.id)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(Error::NotFound {
                kind: "schedule",
                id: s.id.clone(),
            });
        }
        Ok(())
    }

    pub(super) async fn schedule_list_all(&self) -> Result<Vec<ScheduleRecord>> {
        let rows = sqlx::query("SELECT * FROM schedules ORDER BY created_at, id")
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(schedule).collect()
    }
}
