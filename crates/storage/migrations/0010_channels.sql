-- IM channels: a channel is owned by a user; its credentials are sealed
-- by the caller; `data` holds the platform config, routing and session
-- settings. The sessions a channel opened are keyed by the routing's
-- session key; the chats it has seen, and the platform message ids it
-- has taken (each inbound message is handled once, by one replica).
CREATE TABLE IF NOT EXISTS channels (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    channel_type TEXT NOT NULL,
    name TEXT,
    platform_bot_id TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    sealed_credentials TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS channels_user ON channels (user_id);
CREATE TABLE IF NOT EXISTS channel_sessions (
    channel_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (channel_id, session_key)
);
CREATE TABLE IF NOT EXISTS channel_chats (
    channel_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    name TEXT NOT NULL,
    chat_type TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    PRIMARY KEY (channel_id, chat_id)
);
CREATE TABLE IF NOT EXISTS channel_inbound (
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (channel_id, message_id)
);
CREATE INDEX IF NOT EXISTS channel_inbound_seen ON channel_inbound (seen_at);
