-- +goose Up
-- 0014: a turn's reply is sent once across instances (store/postgres's
-- 0014). Only a shared store uses these columns: they are here so that
-- both drivers keep one schema. The inbox entry keeps the text of its
-- turn's reply; the outbox row of a reply that answers an inbox entry
-- names it, at most one row per entry.
ALTER TABLE inbox ADD COLUMN reply TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN inbox_id INTEGER;
CREATE UNIQUE INDEX outbox_inbox ON outbox (inbox_id) WHERE inbox_id IS NOT NULL;
