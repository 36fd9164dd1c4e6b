-- +goose Up
-- 0018: a request nobody answered is reminded once (hitl.remind_after)
-- and escalated step by step (hitl.escalate); the same columns as
-- store/postgres's 0018. reminded is when the reminder went out (0: not
-- yet), escalated how many steps were taken. Each is set by one
-- conditional UPDATE, so a restart does not send either again.
ALTER TABLE approvals ADD COLUMN reminded INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN escalated INTEGER NOT NULL DEFAULT 0;
