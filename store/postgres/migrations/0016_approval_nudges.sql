-- +goose Up
-- 0018: a request nobody answered is reminded once (hitl.remind_after)
-- and escalated step by step (hitl.escalate); store/sqlite's 0018.
-- reminded is when the reminder went out (0: not yet), escalated how many
-- steps were taken. Each is set by one conditional UPDATE, so of several
-- instances one sends it, and a restart does not send it again.
ALTER TABLE approvals ADD COLUMN reminded BIGINT NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN escalated INTEGER NOT NULL DEFAULT 0;
