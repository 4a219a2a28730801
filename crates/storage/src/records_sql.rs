//! Agents, credentials and schedules (owner-scoped documents): one set of
//! statements for both SQL backends, and the owner-scoped reads and
//! deletes the library and session statements go through too. Deleting
//! an agent with its sessions is each backend's own
//! (`agent_delete_cascade`).

/// The statements for `$backend` (with a `pool`), written for PostgreSQL
/// and passed through `$spell` (the backend's spelling of a statement).
macro_rules! records_sql {
    ($backend:ty, $spell:expr) => {
        const _: () = {
            use $crate::error::Result;
            use $crate::params::Document;
            use $crate::record::{AgentRecord, CredentialRecord, ScheduleRecord};
            use $crate::rows::{Columns, agent, credential, schedule};
            use $crate::sql_storage::OwnedTable;

            fn sql(statement: &str) -> String {
                let spell: fn(&str) -> String = $spell;
                spell(statement)
            }

            impl $backend {
                pub(super) async fn ping_db(&self) -> Result<()> {
                    sqlx::query("SELECT 1").execute(&self.pool).await?;
                    Ok(())
                }

                /// The row `statement` (`... WHERE user_id = $1 AND id = $2`)
                /// finds, if any.
                pub(super) async fn owned_row(
                    &self,
                    statement: &str,
                    user: &str,
                    id: &str,
                ) -> Result<Option<impl Columns>> {
                    Ok(sqlx::query(&sql(statement))
                        .bind(user)
                        .bind(id)
                        .fetch_optional(&self.pool)
                        .await?)
                }

                /// The rows `statement` (`... WHERE user_id = $1 ...`) lists.
                pub(super) async fn owned_rows(
                    &self,
                    statement: &str,
                    user: &str,
                ) -> Result<Vec<impl Columns>> {
                    Ok(sqlx::query(&sql(statement))
                        .bind(user)
                        .fetch_all(&self.pool)
                        .await?)
                }

                /// Whether `statement` (`DELETE ... WHERE user_id = $1 AND
                /// id = $2`) deleted a row.
                pub(super) async fn owned_delete(
                    &self,
                    statement: &str,
                    user: &str,
                    id: &str,
                ) -> Result<bool> {
                    let done = sqlx::query(&sql(statement))
                        .bind(user)
                        .bind(id)
                        .execute(&self.pool)
                        .await?;
                    Ok(done.rows_affected() > 0)
                }

                async fn document_insert(&self, doc: Document<'_>) -> Result<()> {
                    let statement = sql(&doc.insert_sql());
                    doc.bind(sqlx::query(&statement))
                        .execute(&self.pool)
                        .await?;
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

                pub(super) async fn agent_get(
                    &self,
                    user: &str,
                    id: &str,
                ) -> Result<Option<AgentRecord>> {
                    const STATEMENT: &str = concat!(
                        "SELECT ",
                        crate::columns::agents!(),
                        " FROM agents WHERE user_id = $1 AND id = $2"
                    );
                    let row = self.owned_row(STATEMENT, user, id).await?;
                    row.as_ref().map(agent).transpose()
                }

                pub(super) async fn agent_list(&self, user: &str) -> Result<Vec<AgentRecord>> {
                    const STATEMENT: &str = concat!(
                        "SELECT ",
                        crate::columns::agents!(),
                        " FROM agents WHERE user_id = $1 \
                         ORDER BY created_at COLLATE \"C\", id COLLATE \"C\""
                    );
                    let rows = self.owned_rows(STATEMENT, user).await?;
                    rows.iter().map(agent).collect()
                }

                pub(super) async fn agent_update(&self, a: &AgentRecord) -> Result<()> {
                    let done = sqlx::query(&sql("UPDATE agents SET data = $1, updated_at = $2 \
                         WHERE user_id = $3 AND id = $4"))
                    .bind(a.data.to_string())
                    .bind(&a.updated_at)
                    .bind(&a.user_id)
                    .bind(&a.id)
                    .execute(&self.pool)
                    .await?;
                    crate::rows::found(done.rows_affected(), "agent", &a.id)
                }

                pub(super) async fn delete_owned(
                    &self,
                    table: OwnedTable,
                    user: &str,
                    id: &str,
                ) -> Result<bool> {
                    let statement = match table {
                        OwnedTable::Credentials => {
                            "DELETE FROM credentials WHERE user_id = $1 AND id = $2"
                        }
                        OwnedTable::Schedules => {
                            "DELETE FROM schedules WHERE user_id = $1 AND id = $2"
                        }
                    };
                    self.owned_delete(statement, user, id).await
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
                    const STATEMENT: &str = concat!(
                        "SELECT ",
                        crate::columns::credentials!(),
                        " FROM credentials WHERE user_id = $1 AND id = $2"
                    );
                    let row = self.owned_row(STATEMENT, user, id).await?;
                    row.as_ref().map(credential).transpose()
                }

                pub(super) async fn credential_list(
                    &self,
                    user: &str,
                ) -> Result<Vec<CredentialRecord>> {
                    const STATEMENT: &str = concat!(
                        "SELECT ",
                        crate::columns::credentials!(),
                        " FROM credentials WHERE user_id = $1 \
                         ORDER BY created_at COLLATE \"C\", id COLLATE \"C\""
                    );
                    let rows = self.owned_rows(STATEMENT, user).await?;
                    rows.iter().map(credential).collect()
                }

                pub(super) async fn credential_update(&self, c: &CredentialRecord) -> Result<()> {
                    let done =
                        sqlx::query(&sql("UPDATE credentials SET sealed = $1, updated_at = $2 \
                         WHERE user_id = $3 AND id = $4"))
                        .bind(&c.sealed)
                        .bind(&c.updated_at)
                        .bind(&c.user_id)
                        .bind(&c.id)
                        .execute(&self.pool)
                        .await?;
                    crate::rows::found(done.rows_affected(), "credential", &c.id)
                }

                pub(super) async fn schedule_list(
                    &self,
                    user: &str,
                ) -> Result<Vec<ScheduleRecord>> {
                    const STATEMENT: &str = concat!(
                        "SELECT ",
                        crate::columns::schedules!(),
                        " FROM schedules WHERE user_id = $1 \
                         ORDER BY created_at COLLATE \"C\", id COLLATE \"C\""
                    );
                    let rows = self.owned_rows(STATEMENT, user).await?;
                    rows.iter().map(schedule).collect()
                }
            }
        };
    };
}

pub(crate) use records_sql;
