//! The column lists of the record tables, for `SELECT`s that name their
//! columns instead of `*`.
//!
//! A prepared `SELECT *` fixes its result columns when it is prepared: once
//! a newer replica migrates the schema (adds a column), PostgreSQL refuses
//! an older replica's cached statement ("cached plan must not change result
//! type") and SQLite re-prepares it under the reader. Naming the columns
//! keeps every replica's statements valid across additive migrations.
//! Each list is what the row mappers in `rows.rs` read.

/// Expands to the column list of table `agents`.
macro_rules! agents {
    () => {
        "id, user_id, created_at, updated_at, data"
    };
}

/// Expands to the column list of table `credentials`.
macro_rules! credentials {
    () => {
        "id, user_id, created_at, updated_at, sealed"
    };
}

/// Expands to the column list of table `sessions`.
macro_rules! sessions {
    () => {
        "id, user_id, agent_id, workspace_id, created_at, updated_at, config, state, revision"
    };
}

/// Expands to the column list of table `schedules`.
macro_rules! schedules {
    () => {
        "id, user_id, created_at, updated_at, data, next_check_at"
    };
}

/// Expands to the column list of table `api_keys`.
macro_rules! api_keys {
    () => {
        "hash, user_id, label, created_at"
    };
}

/// Expands to the column list of table `mcp_library`.
macro_rules! mcp_library {
    () => {
        "id, user_id, name, hub_id, card_id, version, display_name, description, tags, author, \
         icon_url, url, is_stateful, enabled, sealed, created_at, updated_at"
    };
}

/// Expands to the column list of table `skill_library`.
macro_rules! skill_library {
    () => {
        "id, user_id, name, hub_id, card_id, version, source, display_name, description, tags, \
         author, icon_url, url, markdown, enabled, created_at, updated_at"
    };
}

/// Expands to the column list of table `knowledge_bases`.
macro_rules! knowledge_bases {
    () => {
        "id, user_id, name, data, created_at, updated_at"
    };
}

/// Expands to the column list of table `knowledge_documents`.
macro_rules! knowledge_documents {
    () => {
        "id, knowledge_base_id, user_id, filename, content_type, size, status, error, \
         chunk_count, created_at, updated_at"
    };
}

/// Expands to the column list of table `teams`.
macro_rules! teams {
    () => {
        "id, user_id, session_id, leader_agent_id, data, created_at, updated_at"
    };
}

pub(crate) use {
    agents, api_keys, credentials, knowledge_bases, knowledge_documents, mcp_library, schedules,
    sessions, skill_library, teams,
};
