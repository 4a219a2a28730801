-- The PostgreSQL twin of migrations/0009_schedule_next_check.sql: when
-- each schedule may next be due.
ALTER TABLE schedules ADD COLUMN IF NOT EXISTS next_check_at TEXT;
CREATE INDEX IF NOT EXISTS schedules_next_check ON schedules (next_check_at COLLATE "C");
