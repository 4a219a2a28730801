-- Each user's library of installed MCP servers and skills, filled from
-- hubs. Names are unique per user. An MCP's rendered config (and the
-- answers it was rendered from) carries API keys: it is stored sealed.
-- Booleans are written as 0 / 1 (BIGINT) as in SQLite.
CREATE TABLE IF NOT EXISTS mcp_library (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    hub_id TEXT,
    card_id TEXT,
    version TEXT,
    display_name TEXT,
    description TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '[]',
    author TEXT,
    icon_url TEXT,
    url TEXT,
    is_stateful BIGINT NOT NULL DEFAULT 1,
    enabled BIGINT NOT NULL DEFAULT 1,
    sealed TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (user_id, name)
);

CREATE TABLE IF NOT EXISTS skill_library (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    hub_id TEXT,
    card_id TEXT,
    version TEXT,
    source TEXT,
    display_name TEXT,
    description TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '[]',
    author TEXT,
    icon_url TEXT,
    url TEXT,
    markdown TEXT NOT NULL DEFAULT '',
    enabled BIGINT NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (user_id, name)
);
