-- When each schedule may next be due (fixed-width UTC text, so it sorts as
-- time), so the scheduler reads the due ones instead of every schedule on
-- every tick. NULL: unknown (written by an older replica), checked on
-- every tick.
ALTER TABLE schedules ADD COLUMN next_check_at TEXT;
CREATE INDEX IF NOT EXISTS schedules_next_check ON schedules (next_check_at);
