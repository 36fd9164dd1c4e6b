-- +goose Up
-- 0014: a turn's reply is sent once across instances (store/sqlite's
-- 0014). The inbox entry keeps the text of its turn's reply, recorded with
-- the stage "replied" before the reply is handed over, so that an
-- instance taking the turn over can hand it over again; the outbox row of
-- a reply that answers an inbox entry names it, at most one row per entry,
-- so that of the instances handing that reply over only the first writes
-- it and sends it.
ALTER TABLE inbox ADD COLUMN reply TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN inbox_id BIGINT;
CREATE UNIQUE INDEX outbox_inbox ON outbox (inbox_id) WHERE inbox_id IS NOT NULL;
