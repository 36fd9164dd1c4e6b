-- +goose Up
-- 0007: what instances sharing one database agree on (store/sqlite's
-- 0007, BIGINT for INTEGER). Times are
-- Unix nanoseconds; 0 means unset.

-- One row per schedule slot run: the unique key makes it run once.
CREATE TABLE schedule_runs (
    name     TEXT    NOT NULL,
    slot     BIGINT  NOT NULL,  -- the time the run was due
    instance TEXT    NOT NULL,  -- who claimed it
    claimed  BIGINT  NOT NULL,
    PRIMARY KEY (name, slot)
);
CREATE INDEX schedule_runs_slot ON schedule_runs (slot);

-- Named, expiring locks: a row is held by holder until expires.
CREATE TABLE leases (
    name    TEXT    PRIMARY KEY,
    holder  TEXT    NOT NULL,
    expires BIGINT  NOT NULL
);

-- The running instances, each by its heartbeat.
CREATE TABLE instances (
    name      TEXT    PRIMARY KEY,
    version   TEXT    NOT NULL DEFAULT '',
    started   BIGINT  NOT NULL,
    last_seen BIGINT  NOT NULL
);
