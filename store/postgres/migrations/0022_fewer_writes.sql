-- +goose Up
-- 0022: fewer row writes per message on a shared store (store/sqlite's
-- 0022 has the same column, unused: SQLite is not shared).
--
-- A history row written by a journaled turn names its inbox entry: the
-- history then shows how far the turn got (the user's message in it, the
-- final reply appended), so that the inbox row is not updated for those
-- stages; a takeover reads them from here.
ALTER TABLE messages ADD COLUMN inbox_id BIGINT;
CREATE INDEX messages_inbox ON messages (inbox_id) WHERE inbox_id IS NOT NULL;
