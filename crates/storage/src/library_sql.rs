//! Users' libraries of installed MCP servers and skills (owner-scoped
//! rows with names unique per owner): one set of statements for both SQL
//! backends.

use crate::error::Error;

/// A unique-name violation as [`Error::AlreadyExists`].
pub(crate) fn name_clash(kind: &'static str, name: &str) -> impl FnOnce(sqlx::Error) -> Error {
    crate::params::clash(kind, name.to_owned())
}

/// The statements for `$backend` (with a `pool`), written for PostgreSQL
/// and passed through `$spell` (the backend's spelling of a statement).
macro_rules! library_sql {
    ($backend:ty, $spell:expr) => {
        const _: () = {
            use $crate::error::Result;
            use $crate::library_sql::name_clash;
            use $crate::params;
            use $crate::record::{McpLibraryRecord, SkillLibraryRecord};
            use $crate::rows::{mcp, skill};
            use $crate::sql_storage::LibraryTable;

            fn sql(statement: &str) -> String {
                let spell: fn(&str) -> String = $spell;
                spell(statement)
            }

            impl $backend {
                pub(super) async fn library_mcp_insert(&self, m: &McpLibraryRecord) -> Result<()> {
                    let statement = sql(&params::insert("mcp_library", &params::mcp_columns()));
                    params::bind_mcp(sqlx::query(&statement), m)?
                        .execute(&self.pool)
                        .await
                        .map_err(name_clash("MCP", &m.name))?;
                    Ok(())
                }

                pub(super) async fn library_mcp_get(
                    &self,
                    user: &str,
                    id: &str,
                ) -> Result<Option<McpLibraryRecord>> {
                    const STATEMENT: &str = concat!(
                        "SELECT ",
                        crate::columns::mcp_library!(),
                        " FROM mcp_library WHERE user_id = $1 AND id = $2"
                    );
                    let row = self.owned_row(STATEMENT, user, id).await?;
                    row.as_ref().map(mcp).transpose()
                }

                pub(super) async fn library_mcp_list(
                    &self,
                    user: &str,
                ) -> Result<Vec<McpLibraryRecord>> {
                    const STATEMENT: &str = concat!(
                        "SELECT ",
                        crate::columns::mcp_library!(),
                        " FROM mcp_library WHERE user_id = $1 \
                         ORDER BY name COLLATE \"C\", id COLLATE \"C\""
                    );
                    let rows = self.owned_rows(STATEMENT, user).await?;
                    rows.iter().map(mcp).collect()
                }

                pub(super) async fn library_mcp_update(&self, m: &McpLibraryRecord) -> Result<()> {
                    let statement =
                        sql(&params::update_owned("mcp_library", &params::mcp_changes()));
                    let done = params::bind_mcp_update(sqlx::query(&statement), m)?
                        .execute(&self.pool)
                        .await
                        .map_err(name_clash("MCP", &m.name))?;
                    crate::rows::found(done.rows_affected(), "MCP", &m.id)
                }

                pub(super) async fn library_delete(
                    &self,
                    table: LibraryTable,
                    user: &str,
                    id: &str,
                ) -> Result<bool> {
                    let statement = match table {
                        LibraryTable::Mcp => {
                            "DELETE FROM mcp_library WHERE user_id = $1 AND id = $2"
                        }
                        LibraryTable::Skill => {
                            "DELETE FROM skill_library WHERE user_id = $1 AND id = $2"
                        }
                    };
                    self.owned_delete(statement, user, id).await
                }

                pub(super) async fn library_skill_insert(
                    &self,
                    s: &SkillLibraryRecord,
                ) -> Result<()> {
                    let statement = sql(&params::insert("skill_library", &params::skill_columns()));
                    params::bind_skill(sqlx::query(&statement), s)?
                        .execute(&self.pool)
                        .await
                        .map_err(name_clash("skill", &s.name))?;
                    Ok(())
                }

                pub(super) async fn library_skill_get(
                    &self,
                    user: &str,
                    id: &str,
                ) -> Result<Option<SkillLibraryRecord>> {
                    const STATEMENT: &str = concat!(
                        "SELECT ",
                        crate::columns::skill_library!(),
                        " FROM skill_library WHERE user_id = $1 AND id = $2"
                    );
                    let row = self.owned_row(STATEMENT, user, id).await?;
                    row.as_ref().map(skill).transpose()
                }

                pub(super) async fn library_skill_list(
                    &self,
                    user: &str,
                ) -> Result<Vec<SkillLibraryRecord>> {
                    const STATEMENT: &str = concat!(
                        "SELECT ",
                        crate::columns::skill_library!(),
                        " FROM skill_library WHERE user_id = $1 \
                         ORDER BY name COLLATE \"C\", id COLLATE \"C\""
                    );
                    let rows = self.owned_rows(STATEMENT, user).await?;
                    rows.iter().map(skill).collect()
                }
            }
        };
    };
}

pub(crate) use library_sql;
