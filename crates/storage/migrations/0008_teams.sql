-- Agent teams: a team is led by one session and owned by its user; the
-- roster (members with their agents, sessions and roles) is the `data`
-- document. A session's team, as leader or member, is its `team_id`.
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
ALTER TABLE sessions ADD COLUMN team_id TEXT;
CREATE INDEX IF NOT EXISTS sessions_team ON sessions (user_id, team_id);
