-- +goose Up
-- 0022: fewer row writes per message on a shared store (store/postgres's
-- 0022). Only a shared store uses this column: it is here so that both
-- drivers keep one schema. A history row names the inbox entry whose turn
-- wrote it.
ALTER TABLE messages ADD COLUMN inbox_id INTEGER;
CREATE INDEX messages_inbox ON messages (inbox_id) WHERE inbox_id IS NOT NULL;
