//! Users' libraries of installed MCP servers and skills: owner-scoped rows
//! with names unique per owner.

use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::SqliteStorage;
use crate::error::{Error, Result};
use crate::record::{LibraryCard, McpLibraryRecord, SkillLibraryRecord};

/// The card columns of a row.
fn card(row: &SqliteRow) -> Result<LibraryCard> {
    let tags: String = row.try_get("tags")?;
    Ok(LibraryCard {
        hub_id: row.try_get("hub_id")?,
        card_id: row.try_get("card_id")?,
        version: row.try_get("version")?,
        display_name: row.try_get("display_name")?,
        description: row.try_get("description")?,
        tags: serde_json::from_str(&tags)?,
        author: row.try_get("author")?,
        icon_url: row.try_get("icon_url")?,
        url: row.try_get("url")?,
    })
}

fn mcp(row: &SqliteRow) -> Result<McpLibraryRecord> {
    Ok(McpLibraryRecord {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        name: row.try_get("name")?,
        card: card(row)?,
        is_stateful: row.try_get::<i64, _>("is_stateful")? != 0,
        enabled: row.try_get::<i64, _>("enabled")? != 0,
        sealed: row.try_get("sealed")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn skill(row: &SqliteRow) -> Result<SkillLibraryRecord> {
    Ok(SkillLibraryRecord {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        name: row.try_get("name")?,
        card: card(row)?,
        source: row.try_get("source")?,
        markdown: row.try_get("markdown")?,
        enabled: row.try_get::<i64, _>("enabled")? != 0,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// A unique-name violation as [`Error::AlreadyExists`].
fn name_clash(kind: &'static str, name: &str) -> impl FnOnce(sqlx::Error) -> Error {
    let name = name.to_owned();
    move |e| match e {
        sqlx::Error::Database(db) if db.is_unique_violation() => {
            Error::AlreadyExists { kind, key: name }
        }
        other => Error::Database(other),
    }
}

impl SqliteStorage {
    pub(super) async fn library_mcp_insert(&self, m: &McpLibraryRecord) -> Result<()> {
        let c = &m.card;
        sqlx::query(
            "INSERT INTO mcp_library (id, user_id, name, hub_id, card_id, version, \
             display_name, description, tags, author, icon_url, url, is_stateful, enabled, \
             sealed, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&m.id)
        .bind(&m.user_id)
        .bind(&m.name)
        .bind(&c.hub_id)
        .bind(&c.card_id)
        .bind(&c.version)
        .bind(&c.display_name)
        .bind(&c.description)
        .bind(serde_json::to_string(&c.tags)?)
        .bind(&c.author)
        .bind(&c.icon_url)
        .bind(&c.url)
        .bind(i64::from(m.is_stateful))
        .bind(i64::from(m.enabled))
        .bind(&m.sealed)
        .bind(&m.created_at)
        .bind(&m.updated_at)
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
        let row = sqlx::query("SELECT * FROM mcp_library WHERE user_id = ? AND id = ?")
            .bind(user)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(mcp).transpose()
    }

    pub(super) async fn library_mcp_list(&self, user: &str) -> Result<Vec<McpLibraryRecord>> {
        let rows = sqlx::query("SELECT * FROM mcp_library WHERE user_id = ? ORDER BY name, id")
            .bind(user)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(mcp).collect()
    }

    pub(super) async fn library_mcp_update(&self, m: &McpLibraryRecord) -> Result<()> {
        let c = &m.card;
        let done = sqlx::query(
            "UPDATE mcp_library SET name = ?, hub_id = ?, card_id = ?, version = ?, \
             display_name = ?, description = ?, tags = ?, author = ?, icon_url = ?, url = ?, \
             is_stateful = ?, enabled = ?, sealed = ?, updated_at = ? \
             WHERE user_id = ? AND id = ?",
        )
        .bind(&m.name)
        .bind(&c.hub_id)
        .bind(&c.card_id)
        .bind(&c.version)
        .bind(&c.display_name)
        .bind(&c.description)
        .bind(serde_json::to_string(&c.tags)?)
        .bind(&c.author)
        .bind(&c.icon_url)
        .bind(&c.url)
        .bind(i64::from(m.is_stateful))
        .bind(i64::from(m.enabled))
        .bind(&m.sealed)
        .bind(&m.updated_at)
        .bind(&m.user_id)
        .bind(&m.id)
        .execute(&self.pool)
        .await
        .map_err(name_clash("MCP", &m.name))?;
        if done.rows_affected() == 0 {
            return Err(Error::NotFound {
                kind: "MCP",
                id: m.id.clone(),
            });
        }
        Ok(())
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
        let c = &s.card;
        sqlx::query(
            "INSERT INTO skill_library (id, user_id, name, hub_id, card_id, version, source, \
             display_name, description, tags, author, icon_url, url, markdown, enabled, \
             created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&s.id)
        .bind(&s.user_id)
        .bind(&s.name)
        .bind(&c.hub_id)
        .bind(&c.card_id)
        .bind(&c.version)
        .bind(&s.source)
        .bind(&c.display_name)
        .bind(&c.description)
        .bind(serde_json::to_string(&c.tags)?)
        .bind(&c.author)
        .bind(&c.icon_url)
        .bind(&c.url)
        .bind(&s.markdown)
        .bind(i64::from(s.enabled))
        .bind(&s.created_at)
        .bind(&s.updated_at)
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
        let row = sqlx::query("SELECT * FROM skill_library WHERE user_id = ? AND id = ?")
            .bind(user)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(skill).transpose()
    }

    pub(super) async fn library_skill_list(&self, user: &str) -> Result<Vec<SkillLibraryRecord>> {
        let rows = sqlx::query("SELECT * FROM skill_library WHERE user_id = ? ORDER BY name, id")
            .bind(user)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(skill).collect()
    }
}

/// The library tables a plain delete works on.
#[derive(Debug, Clone, Copy)]
pub(super) enum LibraryTable {
    Mcp,
    Skill,
}
