//! API keys (their hashes): one set of statements for both SQL backends.

/// The statements for `$backend` (with a `pool`), written for PostgreSQL
/// and passed through `$spell` (the backend's spelling of a statement).
macro_rules! api_key_sql {
    ($backend:ty, $spell:expr) => {
        const _: () = {
            use $crate::error::Result;
            use $crate::record::ApiKeyRecord;
            use $crate::rows::api_key;

            fn sql(statement: &str) -> String {
                let spell: fn(&str) -> String = $spell;
                spell(statement)
            }

            impl $backend {
                pub(super) async fn api_key_insert(&self, k: &ApiKeyRecord) -> Result<()> {
                    sqlx::query(&sql(
                        "INSERT INTO api_keys (hash, user_id, label, created_at) \
                         VALUES ($1, $2, $3, $4)",
                    ))
                    .bind(&k.hash)
                    .bind(&k.user_id)
                    .bind(&k.label)
                    .bind(&k.created_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                pub(super) async fn api_key_find(
                    &self,
                    hash: &str,
                ) -> Result<Option<ApiKeyRecord>> {
                    let row = sqlx::query(&sql(concat!(
                        "SELECT ",
                        crate::columns::api_keys!(),
                        " FROM api_keys WHERE hash = $1"
                    )))
                    .bind(hash)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(api_key).transpose()
                }

                pub(super) async fn api_key_list(&self) -> Result<Vec<ApiKeyRecord>> {
                    let rows = sqlx::query(&sql(concat!(
                        "SELECT ",
                        crate::columns::api_keys!(),
                        " FROM api_keys ORDER BY user_id, created_at, hash"
                    )))
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(api_key).collect()
                }

                pub(super) async fn api_key_delete(&self, hash: &str) -> Result<bool> {
                    let done = sqlx::query(&sql("DELETE FROM api_keys WHERE hash = $1"))
                        .bind(hash)
                        .execute(&self.pool)
                        .await?;
                    Ok(done.rows_affected() > 0)
                }
            }
        };
    };
}

pub(crate) use api_key_sql;
