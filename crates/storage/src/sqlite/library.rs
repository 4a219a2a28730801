//! Users' libraries of installed MCP servers and skills: owner-scoped rows
//! with names unique per owner.

use super::SqliteStorage;
use crate::error::{Error, Result};
use crate::params;
use crate::record::{McpLibraryRecord, SkillLibraryRecord};
use crate::rows::{mcp, skill};
use crate::sql_storage::LibraryTable;

/// A unique-name violation as [`Error::AlreadyExists`].
fn name_clash(kind: &'static str, name: &str) -> impl FnOnce(sqlx::Error) -> Error {
    params::clash(kind, name.to_owned())
}

impl SqliteStorage {
    pub(super) async fn library_mcp_insert(&self, m: &McpLibraryRecord) -> Result<()> {
        let sql = crate::sql_storage::sqlite_spelling(&params::insert(
            "mcp_library",
            &params::mcp_columns(),
        ));
        params::bind_mcp(sqlx::query(&sql), m)?
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
        let row = sqlx::query(concat!(
            "SELECT ",
            crate::columns::mcp_library!(),
            " FROM mcp_library WHERE user_id = ? AND id = ?"
        ))
        .bind(user)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(mcp).transpose()
    }

    pub(super) async fn library_mcp_list(&self, user: &str) -> Result<Vec<McpLibraryRecord>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            crate::columns::mcp_library!(),
            " FROM mcp_library WHERE user_id = ? ORDER BY name, id"
        ))
        .bind(user)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(mcp).collect()
    }

    pub(super) async fn library_mcp_update(&self, m: &McpLibraryRecord) -> Result<()> {
        let sql = crate::sql_storage::sqlite_spelling(&params::update_owned(
            "mcp_library",
            &params::mcp_changes(),
        ));
        let done = params::bind_mcp_update(sqlx::query(&sql), m)?
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
        let sql = match table {
            LibraryTable::Mcp => "DELETE FROM mcp_library WHERE user_id = ? AND id = ?",
            LibraryTable::Skill => "DELETE FROM skill_library WHERE user_id = ? AND id = ?",
        };
        let done = sqlx::query(sql)
            .bind(user)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    pub(super) async fn library_skill_insert(&self, s: &SkillLibraryRecord) -> Result<()> {
        let sql = crate::sql_storage::sqlite_spelling(&params::insert(
            "skill_library",
            &params::skill_columns(),
        ));
        params::bind_skill(sqlx::query(&sql), s)?
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
        let row = sqlx::query(concat!(
            "SELECT ",
            crate::columns::skill_library!(),
            " FROM skill_library WHERE user_id = ? AND id = ?"
        ))
        .bind(user)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(skill).transpose()
    }

    pub(super) async fn library_skill_list(&self, user: &str) -> Result<Vec<SkillLibraryRecord>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            crate::columns::skill_library!(),
            " FROM skill_library WHERE user_id = ? ORDER BY name, id"
        ))
        .bind(user)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(skill).collect()
    }
}
