-- +goose Up
-- 0009: the durable inbox of instances sharing one database (store.Inbox;
-- store/sqlite's 0009 has the same table, unused: SQLite is not shared).
-- Times are Unix nanoseconds; 0 means unset.
CREATE TABLE inbox (
    id       BIGSERIAL PRIMARY KEY,        -- the order of arrival
    gateway  TEXT     NOT NULL,
    msg_key  TEXT     NOT NULL,            -- the platform's id of the message
    conv     TEXT     NOT NULL,            -- its entries are run in order
    data     BYTEA    NOT NULL,            -- the message, encoded
    files    INTEGER  NOT NULL DEFAULT 0,  -- attachments held by the receiver
    receiver TEXT     NOT NULL,
    received BIGINT   NOT NULL,
    holder   TEXT     NOT NULL DEFAULT '', -- who claimed (or, unclaimed, reserved) it
    claimed  INTEGER  NOT NULL DEFAULT 0,  -- 1 once claimed
    expires  BIGINT   NOT NULL DEFAULT 0,  -- of the claim or reservation
    stage    INTEGER  NOT NULL DEFAULT 0,  -- how far its turn got
    cancel   INTEGER  NOT NULL DEFAULT 0,  -- 1: /cancel asked its holder to stop its turn
    done     BIGINT   NOT NULL DEFAULT 0,  -- when its turn ended; 0 pending
    UNIQUE (gateway, msg_key)
);
CREATE INDEX inbox_pending ON inbox (conv, id) WHERE done = 0;
CREATE INDEX inbox_done ON inbox (done) WHERE done <> 0;
