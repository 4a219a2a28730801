//! Records built from result rows, for every SQL backend: both schemas
//! name and type their columns alike (text, 64-bit integers, JSON
//! documents as text), so one mapping serves SQLite and PostgreSQL rows.

use serde_json::Value;
use sqlx::{ColumnIndex, Decode, Row, Type};

use crate::error::Result;
use crate::record::{
    AgentRecord, ApiKeyRecord, CredentialRecord, LibraryCard, McpLibraryRecord, MessagePage,
    ScheduleRecord, SessionRecord, SkillLibraryRecord, StoredMessage,
};
use crate::usage::UsageCounts;

/// The column reads record mapping needs.
pub(crate) trait Columns {
    /// A text column.
    fn text(&self, col: &str) -> Result<String>;
    /// A nullable text column.
    fn opt_text(&self, col: &str) -> Result<Option<String>>;
    /// A 64-bit integer column.
    fn int(&self, col: &str) -> Result<i64>;
    /// A nullable 64-bit integer column, by position.
    fn opt_int_at(&self, index: usize) -> Result<Option<i64>>;

    /// A JSON document kept as text.
    fn json(&self, col: &str) -> Result<Value> {
        Ok(serde_json::from_str(&self.text(col)?)?)
    }

    /// A flag kept as 0 / 1.
    fn flag(&self, col: &str) -> Result<bool> {
        Ok(self.int(col)? != 0)
    }
}

impl<R> Columns for R
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    usize: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    fn text(&self, col: &str) -> Result<String> {
        Ok(self.try_get(col)?)
    }

    fn opt_text(&self, col: &str) -> Result<Option<String>> {
        Ok(self.try_get(col)?)
    }

    fn int(&self, col: &str) -> Result<i64> {
        Ok(self.try_get(col)?)
    }

    fn opt_int_at(&self, index: usize) -> Result<Option<i64>> {
        Ok(self.try_get(index)?)
    }
}

pub(crate) fn agent(row: &impl Columns) -> Result<AgentRecord> {
    Ok(AgentRecord {
        id: row.text("id")?,
        user_id: row.text("user_id")?,
        created_at: row.text("created_at")?,
        updated_at: row.text("updated_at")?,
        data: row.json("data")?,
    })
}

pub(crate) fn credential(row: &impl Columns) -> Result<CredentialRecord> {
    Ok(CredentialRecord {
        id: row.text("id")?,
        user_id: row.text("user_id")?,
        created_at: row.text("created_at")?,
        updated_at: row.text("updated_at")?,
        sealed: row.text("sealed")?,
    })
}

pub(crate) fn schedule(row: &impl Columns) -> Result<ScheduleRecord> {
    Ok(ScheduleRecord {
        id: row.text("id")?,
        user_id: row.text("user_id")?,
        created_at: row.text("created_at")?,
        updated_at: row.text("updated_at")?,
        data: row.json("data")?,
        next_check_at: row.opt_text("next_check_at")?,
    })
}

pub(crate) fn api_key(row: &impl Columns) -> Result<ApiKeyRecord> {
    Ok(ApiKeyRecord {
        hash: row.text("hash")?,
        user_id: row.text("user_id")?,
        label: row.text("label")?,
        created_at: row.text("created_at")?,
    })
}

pub(crate) fn session(row: &impl Columns) -> Result<SessionRecord> {
    Ok(SessionRecord {
        id: row.text("id")?,
        user_id: row.text("user_id")?,
        agent_id: row.text("agent_id")?,
        workspace_id: row.text("workspace_id")?,
        created_at: row.text("created_at")?,
        updated_at: row.text("updated_at")?,
        config: row.json("config")?,
        state: row.json("state")?,
        revision: row.int("revision")?,
    })
}

fn message(row: &impl Columns) -> Result<StoredMessage> {
    Ok(StoredMessage {
        seq: row.int("seq")?,
        id: row.text("id")?,
        msg: row.json("msg")?,
    })
}

/// A page of at most `limit` messages from rows of up to `limit + 1`
/// (the extra one only says that more exist).
pub(crate) fn page(rows: &[impl Columns], limit: u32) -> Result<MessagePage> {
    let mut messages = rows.iter().map(message).collect::<Result<Vec<_>>>()?;
    let has_more = messages.len() > limit as usize;
    messages.truncate(limit as usize);
    Ok(MessagePage { messages, has_more })
}

/// The card columns of a library row.
fn card(row: &impl Columns) -> Result<LibraryCard> {
    Ok(LibraryCard {
        hub_id: row.opt_text("hub_id")?,
        card_id: row.opt_text("card_id")?,
        version: row.opt_text("version")?,
        display_name: row.opt_text("display_name")?,
        description: row.text("description")?,
        tags: serde_json::from_str(&row.text("tags")?)?,
        author: row.opt_text("author")?,
        icon_url: row.opt_text("icon_url")?,
        url: row.opt_text("url")?,
    })
}

pub(crate) fn mcp(row: &impl Columns) -> Result<McpLibraryRecord> {
    Ok(McpLibraryRecord {
        id: row.text("id")?,
        user_id: row.text("user_id")?,
        name: row.text("name")?,
        card: card(row)?,
        is_stateful: row.flag("is_stateful")?,
        enabled: row.flag("enabled")?,
        sealed: row.text("sealed")?,
        created_at: row.text("created_at")?,
        updated_at: row.text("updated_at")?,
    })
}

pub(crate) fn skill(row: &impl Columns) -> Result<SkillLibraryRecord> {
    Ok(SkillLibraryRecord {
        id: row.text("id")?,
        user_id: row.text("user_id")?,
        name: row.text("name")?,
        card: card(row)?,
        source: row.opt_text("source")?,
        markdown: row.text("markdown")?,
        enabled: row.flag("enabled")?,
        created_at: row.text("created_at")?,
        updated_at: row.text("updated_at")?,
    })
}

/// The usage counter columns, in [`UsageCounts`] order.
pub(crate) const USAGE_COLUMNS: [&str; 6] = [
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "model_calls",
    "runs",
];

/// The counters of `delta` as SQL integers, in [`USAGE_COLUMNS`] order
/// (SQL integers are signed: larger counts are stored as `i64::MAX`).
pub(crate) fn usage_values(delta: &UsageCounts) -> [i64; 6] {
    [
        delta.input_tokens,
        delta.output_tokens,
        delta.cache_read_tokens,
        delta.cache_write_tokens,
        delta.model_calls,
        delta.runs,
    ]
    .map(|n| i64::try_from(n).unwrap_or(i64::MAX))
}

/// Counters read from the first six columns (sums are `NULL` over no
/// rows: zero).
pub(crate) fn usage(row: &impl Columns) -> Result<UsageCounts> {
    let get = |i: usize| -> Result<u64> {
        Ok(row
            .opt_int_at(i)?
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(0))
    };
    Ok(UsageCounts {
        input_tokens: get(0)?,
        output_tokens: get(1)?,
        cache_read_tokens: get(2)?,
        cache_write_tokens: get(3)?,
        model_calls: get(4)?,
        runs: get(5)?,
    })
}

/// `Ok` when a statement touched a row, else [`Error::NotFound`] naming
/// the `kind` of record and its `id`.
pub(crate) fn found(rows_affected: u64, kind: &'static str, id: &str) -> Result<()> {
    if rows_affected == 0 {
        Err(crate::Error::NotFound {
            kind,
            id: id.to_owned(),
        })
    } else {
        Ok(())
    }
}
