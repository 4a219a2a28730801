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
                        sqlx::query(&sql("UPDATE schedules SET data = $1, updated_at = $2 \
                         WHERE user_id = $3 AND id = $4"))
                        .bind(s.data.to_string())
                        .bind(&s.updated_at)
                        .bind(&s.user_id)
                        .bind(&s.id)
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
            }
        };
    };
}
pub(crate) use schedule_sql;
