-- Background tasks: tool calls the service moved to the background after
-- they outlived the offload timeout. A row is written when the call is
-- offloaded (state 'running'), gets the call's result when it ends
-- ('done' / 'failed') before the result is delivered to the session, and
-- `delivered_at` once it is. `owner` is the process running the call; it
-- refreshes `heartbeat_at` (ms since the Unix epoch) while the row is
-- undelivered, so a row with a stale heartbeat belongs to a dead process
-- and is taken over ('running' becomes 'lost').
CREATE TABLE IF NOT EXISTS background_tasks (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    state TEXT NOT NULL,
    result TEXT,
    owner TEXT NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    delivered_at TEXT
);
CREATE INDEX IF NOT EXISTS background_tasks_session ON background_tasks (session_id, created_at);
CREATE INDEX IF NOT EXISTS background_tasks_undelivered ON background_tasks (delivered_at, heartbeat_at);
