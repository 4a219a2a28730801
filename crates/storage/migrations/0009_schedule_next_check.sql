-- When each schedule may next be due (fixed-width UTC text, so it sorts as
-- time), so the scheduler reads the due ones instead of every schedule on
-- every tick. NULL: unknown (a row from before this migration), read on
-- every tick. A replica older than this column leaves the value as it was
-- when it updates a schedule; the scheduler's periodic full read covers
-- that.
ALTER TABLE schedules ADD COLUMN next_check_at TEXT;
CREATE INDEX IF NOT EXISTS schedules_next_check ON schedules (next_check_at);
