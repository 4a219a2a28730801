-- At most one session per (user, agent, workspace), enforced by the
-- database so concurrent creates cannot both insert. (SQLite's version
-- also keeps duplicates from before the constraint readable; a
-- PostgreSQL database never had any.)
CREATE UNIQUE INDEX IF NOT EXISTS sessions_unique_owner
    ON sessions (user_id, agent_id, workspace_id);
