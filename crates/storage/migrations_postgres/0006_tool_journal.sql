-- The tool-call journal: one row per tool call a run executes, written
-- when the tool starts and again when it finishes, so a replica that
-- takes over a run whose runner died knows which calls finished and which
-- are in doubt (started, outcome unknown). Rows live while their reply
-- runs: a run clears its session's rows when its reply ends.
CREATE TABLE IF NOT EXISTS tool_calls (
    idempotency_key TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    reply_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    result TEXT
);
CREATE INDEX IF NOT EXISTS tool_calls_session ON tool_calls (session_id, started_at);
