-- +goose Up
-- 0020: an incident's thread is claimed before it is opened (opener: the
-- instance opening it, conv '' until it is recorded), so that of two
-- instances taking the incident's first deliveries at once only one opens
-- a thread and the other waits for it; reply_to is the incident's first
-- message where the chat has no threads (a Telegram reply chain).
ALTER TABLE webhook_threads ADD COLUMN opener TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_threads ADD COLUMN reply_to TEXT NOT NULL DEFAULT '';
