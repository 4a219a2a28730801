-- At most one session per (user, agent, workspace), enforced by the
-- database so concurrent creates cannot both insert. Sessions that an
-- earlier race duplicated stay readable: each extra copy gets its own
-- `dup` number (its rowid); new sessions have dup = 0 and are unique.
ALTER TABLE sessions ADD COLUMN dup INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET dup = rowid
WHERE rowid NOT IN (
    SELECT MIN(rowid) FROM sessions GROUP BY user_id, agent_id, workspace_id
);
CREATE UNIQUE INDEX IF NOT EXISTS sessions_unique_owner
    ON sessions (user_id, agent_id, workspace_id, dup);
