-- +goose Up
-- 0011: which instance runs an approved call (the same column as
-- store/postgres's 0011, so both drivers keep one schema). SQLite is one
-- process (its lock file), which never writes it: restart recovery marks
-- every executing approval interrupted, as before.
ALTER TABLE approvals ADD COLUMN instance TEXT NOT NULL DEFAULT '';
