-- The PostgreSQL twin of migrations/0008_teams.sql: agent teams, and the
-- team a session takes part in.
CREATE TABLE IF NOT EXISTS teams (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    leader_agent_id TEXT,
    data TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS teams_user ON teams (user_id);
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS team_id TEXT;
CREATE INDEX IF NOT EXISTS sessions_team ON sessions (user_id, team_id);
