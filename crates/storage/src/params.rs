//! What records write, for every SQL backend: each record's columns in
//! one order, the values bound to them, and the statements over them
//! (written for PostgreSQL, `$n` placeholders, as every shared statement
//! is: [`crate::sql_storage::sqlite_spelling`] spells them for SQLite).

use sqlx::query::Query;
use sqlx::{Database, Encode, Type};

use crate::error::{Error, Result};
use crate::record::{LibraryCard, McpLibraryRecord, SessionRecord, SkillLibraryRecord};

/// The value kinds a record binds, for any backend's query.
pub(crate) trait Binder: Sized {
    fn text(self, value: &str) -> Self;
    fn opt_text(self, value: Option<&str>) -> Self;
    fn int(self, value: i64) -> Self;
    fn flag(self, value: bool) -> Self {
        self.int(i64::from(value))
    }
}

impl<'q, DB> Binder for Query<'q, DB, <DB as Database>::Arguments<'q>>
where
    DB: Database,
    String: Encode<'q, DB> + Type<DB>,
    Option<String>: Encode<'q, DB> + Type<DB>,
    i64: Encode<'q, DB> + Type<DB>,
{
    fn text(self, value: &str) -> Self {
        self.bind(value.to_owned())
    }

    fn opt_text(self, value: Option<&str>) -> Self {
        self.bind(value.map(str::to_owned))
    }

    fn int(self, value: i64) -> Self {
        self.bind(value)
    }
}

/// A unique-key violation as [`Error::AlreadyExists`] of `kind` and `key`;
/// any other failure as [`Error::Database`].
pub(crate) fn clash(kind: &'static str, key: String) -> impl FnOnce(sqlx::Error) -> Error {
    move |e| match e {
        sqlx::Error::Database(db) if db.is_unique_violation() => Error::AlreadyExists { kind, key },
        other => Error::Database(other),
    }
}

/// The revision a commit writes, when the stored one (`found`, `None`
/// for a missing session) is the one the writer loaded.
pub(crate) fn next_revision(session_id: &str, expected: i64, found: Option<i64>) -> Result<i64> {
    match found {
        None => Err(Error::NotFound {
            kind: "session",
            id: session_id.to_owned(),
        }),
        Some(found) if found != expected => Err(Error::StaleRevision {
            session_id: session_id.to_owned(),
            expected,
            found,
        }),
        Some(found) => Ok(found + 1),
    }
}

/// The columns of the owner-scoped documents (agents, credentials,
/// schedules) but the body, in [`Document`] order.
const DOCUMENT_COLUMNS: [&str; 4] = ["id", "user_id", "created_at", "updated_at"];

/// An owner-scoped document row: the record's fields and its body (the
/// JSON text of an agent or a schedule, a credential's sealed text).
#[derive(Debug)]
pub(crate) struct Document<'a> {
    pub(crate) table: &'static str,
    pub(crate) body_column: &'static str,
    pub(crate) fields: [&'a str; 4],
    pub(crate) body: String,
}

impl Document<'_> {
    /// Its `INSERT`.
    pub(crate) fn insert_sql(&self) -> String {
        let mut columns = DOCUMENT_COLUMNS.to_vec();
        columns.push(self.body_column);
        insert(self.table, &columns)
    }

    pub(crate) fn bind<B: Binder>(&self, q: B) -> B {
        let q = self.fields.iter().fold(q, |q, field| q.text(field));
        q.text(&self.body)
    }
}

/// Every column of a session row, in [`bind_session`] order.
pub(crate) const SESSION_COLUMNS: [&str; 9] = [
    "id",
    "user_id",
    "agent_id",
    "workspace_id",
    "created_at",
    "updated_at",
    "config",
    "state",
    "revision",
];

pub(crate) fn bind_session<B: Binder>(q: B, s: &SessionRecord) -> B {
    q.text(&s.id)
        .text(&s.user_id)
        .text(&s.agent_id)
        .text(&s.workspace_id)
        .text(&s.created_at)
        .text(&s.updated_at)
        .text(&s.config.to_string())
        .text(&s.state.to_string())
        .int(s.revision)
}

/// The n-th placeholder (1-based).
fn param(n: usize) -> String {
    format!("${n}")
}

/// `INSERT INTO table (columns) VALUES (placeholders)`.
pub(crate) fn insert(table: &str, columns: &[&str]) -> String {
    let params: Vec<String> = (1..=columns.len()).map(param).collect();
    format!(
        "INSERT INTO {table} ({}) VALUES ({})",
        columns.join(", "),
        params.join(", ")
    )
}

/// `UPDATE table SET columns WHERE user_id = .. AND id = ..`: the set
/// columns are bound first, then the owner and the id.
pub(crate) fn update_owned(table: &str, columns: &[&str]) -> String {
    let sets: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{c} = {}", param(i + 1)))
        .collect();
    let n = columns.len();
    format!(
        "UPDATE {table} SET {} WHERE user_id = {} AND id = {}",
        sets.join(", "),
        param(n + 1),
        param(n + 2)
    )
}

/// The card columns, in [`bind_card`] order.
const CARD: [&str; 9] = [
    "hub_id",
    "card_id",
    "version",
    "display_name",
    "description",
    "tags",
    "author",
    "icon_url",
    "url",
];

fn bind_card<B: Binder>(q: B, c: &LibraryCard) -> Result<B> {
    Ok(q.opt_text(c.hub_id.as_deref())
        .opt_text(c.card_id.as_deref())
        .opt_text(c.version.as_deref())
        .opt_text(c.display_name.as_deref())
        .text(&c.description)
        .text(&serde_json::to_string(&c.tags)?)
        .opt_text(c.author.as_deref())
        .opt_text(c.icon_url.as_deref())
        .opt_text(c.url.as_deref()))
}

/// The columns of an MCP library row that an update replaces, in
/// [`bind_mcp_changes`] order.
pub(crate) fn mcp_changes() -> Vec<&'static str> {
    let mut columns = vec!["name"];
    columns.extend(CARD);
    columns.extend(["is_stateful", "enabled", "sealed", "updated_at"]);
    columns
}

/// Every column of an MCP library row, in [`bind_mcp`] order.
pub(crate) fn mcp_columns() -> Vec<&'static str> {
    let mut columns = vec!["id", "user_id"];
    columns.extend(mcp_changes());
    columns.push("created_at");
    columns
}

fn bind_mcp_changes<B: Binder>(q: B, m: &McpLibraryRecord) -> Result<B> {
    Ok(bind_card(q.text(&m.name), &m.card)?
        .flag(m.is_stateful)
        .flag(m.enabled)
        .text(&m.sealed)
        .text(&m.updated_at))
}

/// The changes, then the `WHERE` owner and id of [`update_owned`].
pub(crate) fn bind_mcp_update<B: Binder>(q: B, m: &McpLibraryRecord) -> Result<B> {
    Ok(bind_mcp_changes(q, m)?.text(&m.user_id).text(&m.id))
}

pub(crate) fn bind_mcp<B: Binder>(q: B, m: &McpLibraryRecord) -> Result<B> {
    Ok(bind_mcp_changes(q.text(&m.id).text(&m.user_id), m)?.text(&m.created_at))
}

/// Every column of a skill library row, in [`bind_skill`] order.
pub(crate) fn skill_columns() -> Vec<&'static str> {
    let mut columns = vec!["id", "user_id", "name", "source"];
    columns.extend(CARD);
    columns.extend(["markdown", "enabled", "created_at", "updated_at"]);
    columns
}

pub(crate) fn bind_skill<B: Binder>(q: B, s: &SkillLibraryRecord) -> Result<B> {
    let q = q
        .text(&s.id)
        .text(&s.user_id)
        .text(&s.name)
        .opt_text(s.source.as_deref());
    Ok(bind_card(q, &s.card)?
        .text(&s.markdown)
        .flag(s.enabled)
        .text(&s.created_at)
        .text(&s.updated_at))
}
