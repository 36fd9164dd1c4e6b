-- +goose Up
-- 0010: replies paced per token across instances, and replies that outlive
-- the instance that composed them (store/sqlite's 0010, BIGINT for
-- INTEGER, BYTEA for BLOB, BIGSERIAL for the row id). Times are Unix
-- nanoseconds.

-- The send slots reserved under one key (a token's, or a token's in one
-- chat): the newest reservations, at most the limit's N, as big-endian
-- int64 nanoseconds, oldest first. Prune forgets keys idle for
-- store.SendSlotKeep.
CREATE TABLE send_slots (
    key   TEXT   PRIMARY KEY,
    times BYTEA  NOT NULL,
    last  BIGINT NOT NULL  -- the newest reservation
);
CREATE INDEX send_slots_last ON send_slots (last);

-- Replies written before they are sent: a reply whose composer died is
-- sent by another instance with the same sender (the token).
CREATE TABLE outbox (
    id       BIGSERIAL PRIMARY KEY,
    sender   TEXT    NOT NULL,  -- gateway and token id, e.g. telegram:123456
    gateway  TEXT    NOT NULL,
    chat     TEXT    NOT NULL,
    thread   TEXT    NOT NULL DEFAULT '',
    text     TEXT    NOT NULL,
    composer TEXT    NOT NULL,  -- the instance sending it
    taken    BIGINT  NOT NULL,  -- when the composer wrote or claimed it
    done     INTEGER NOT NULL DEFAULT 0,  -- chunks the platform accepted
    state    TEXT    NOT NULL DEFAULT 'pending',  -- pending | sent | failed
    created  BIGINT  NOT NULL,
    updated  BIGINT  NOT NULL
);
CREATE INDEX outbox_pending ON outbox (sender, state);
CREATE INDEX outbox_updated ON outbox (updated);
