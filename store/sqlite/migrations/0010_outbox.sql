-- +goose Up
-- 0010: replies paced per token across instances, and replies that outlive
-- the instance that composed them. Only a shared store (PostgreSQL) uses
-- these tables: SQLite has one instance, which paces in memory and sends
-- its own replies; the tables are here so that both drivers keep one
-- schema. Times are Unix nanoseconds.

-- The send slots reserved under one key: the newest reservations, at most
-- the limit's N, as big-endian int64 nanoseconds, oldest first.
CREATE TABLE send_slots (
    key   TEXT    PRIMARY KEY,
    times BLOB    NOT NULL,
    last  INTEGER NOT NULL  -- the newest reservation
);
CREATE INDEX send_slots_last ON send_slots (last);

-- Replies written before they are sent.
CREATE TABLE outbox (
    id       INTEGER PRIMARY KEY,
    sender   TEXT    NOT NULL,  -- gateway and token id, e.g. telegram:123456
    gateway  TEXT    NOT NULL,
    chat     TEXT    NOT NULL,
    thread   TEXT    NOT NULL DEFAULT '',
    text     TEXT    NOT NULL,
    composer TEXT    NOT NULL,  -- the instance sending it
    taken    INTEGER NOT NULL,  -- when the composer wrote or claimed it
    done     INTEGER NOT NULL DEFAULT 0,  -- chunks the platform accepted
    state    TEXT    NOT NULL DEFAULT 'pending',  -- pending | sent | failed
    created  INTEGER NOT NULL,
    updated  INTEGER NOT NULL
);
CREATE INDEX outbox_pending ON outbox (sender, state);
CREATE INDEX outbox_updated ON outbox (updated);
