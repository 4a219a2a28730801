//! The schedule lookups the scheduler and the schedule routes need beyond
//! the owner-scoped insert, list and delete: one set of statements for
//! both SQL backends.

/// The statements for `$backend` (with a `pool`), written for PostgreSQL
/// and passed through `$spell` (the backend's spelling of a statement).
macro_rules! schedule_sql {
    ($backend:ty, $spell:expr) => {
        const _: () = {
            use $crate::error::Result;
            use $crate::record::ScheduleRecord;
            use $crate::rows::schedule;

            fn sql(statement: &str) -> String {
                let spell: fn(&str) -> String = $spell;
                spell(statement)
            }

            impl $backend {
                pub(super) async fn schedule_insert(&self, s: &ScheduleRecord) -> Result<()> {
                    sqlx::query(&sql(concat!(
                        "INSERT INTO schedules (",
                        crate::columns::schedules!(),
                        ") VALUES ($1, $2, $3, $4, $5, $6)"
                    )))
                    .bind(&s.id)
                    .bind(&s.user_id)
                    .bind(&s.created_at)
                    .bind(&s.updated_at)
                    .bind(s.data.to_string())
                    .bind(&s.next_check_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                pub(super) async fn schedule_get(
                    &self,
                    user: &str,
                    id: &str,
                ) -> Result<Option<ScheduleRecord>> {
                    let row = sqlx::query(&sql(concat!(
                        "SELECT ",
                        crate::columns::schedules!(),
                        " FROM schedules WHERE user_id = $1 AND id = $2"
                    )))
                    .bind(user)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(schedule).transpose()
                }

                pub(super) async fn schedule_update(&self, s: &ScheduleRecord) -> Result<()> {
                    let done =
                        sqlx::query(&sql("UPDATE schedules SET data = $1, updated_at = $2, \
                         next_check_at = $5 WHERE user_id = $3 AND id = $4"))
                        .bind(s.data.to_string())
                        .bind(&s.updated_at)
                        .bind(&s.user_id)
                        .bind(&s.id)
                        .bind(&s.next_check_at)
                        .execute(&self.pool)
                        .await?;
                    crate::rows::found(done.rows_affected(), "schedule", &s.id)
                }

                pub(super) async fn schedule_list_all(&self) -> Result<Vec<ScheduleRecord>> {
                    let rows = sqlx::query(&sql(concat!(
                        "SELECT ",
                        crate::columns::schedules!(),
                        " FROM schedules ORDER BY created_at COLLATE \"C\", id COLLATE \"C\""
                    )))
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(schedule).collect()
                }

                pub(super) async fn schedule_list_due(
                    &self,
                    at: &str,
                ) -> Result<Vec<ScheduleRecord>> {
                    let rows = sqlx::query(&sql(concat!(
                        "SELECT ",
                        crate::columns::schedules!(),
                        " FROM schedules WHERE next_check_at IS NULL \
                         OR next_check_at COLLATE \"C\" <= $1 \
                         ORDER BY created_at COLLATE \"C\", id COLLATE \"C\""
                    )))
                    .bind(at)
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(schedule).collect()
                }
            }
        };
    };
}
pub(crate) use schedule_sql;
