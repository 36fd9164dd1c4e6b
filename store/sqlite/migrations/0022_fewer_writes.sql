-- +goose Up
-- 0022: fewer row writes per message on a shared store (store/postgres's
-- 0022). Only a shared store uses these columns: they are here so that
-- both drivers keep one schema. A history row names the inbox entry whose
-- turn wrote it; a send slot keeps who reserved each of its times.
ALTER TABLE messages ADD COLUMN inbox_id INTEGER;
CREATE INDEX messages_inbox ON messages (inbox_id) WHERE inbox_id IS NOT NULL;
ALTER TABLE send_slots ADD COLUMN owners BLOB NOT NULL DEFAULT x'';
