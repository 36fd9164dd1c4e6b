-- +goose Up
-- 0007: what instances sharing one database agree on. Portable SQL (the
-- same statements run on PostgreSQL with BIGINT for INTEGER). Times are
-- Unix nanoseconds; 0 means unset.

-- One row per schedule slot run: the unique key makes it run once.
CREATE TABLE schedule_runs (
    name     TEXT    NOT NULL,
    slot     INTEGER NOT NULL,  -- the time the run was due
    instance TEXT    NOT NULL,  -- who claimed it
    claimed  INTEGER NOT NULL,
    PRIMARY KEY (name, slot)
);
CREATE INDEX schedule_runs_slot ON schedule_runs (slot);

-- Named, expiring locks: a row is held by holder until expires.
CREATE TABLE leases (
    name    TEXT    PRIMARY KEY,
    holder  TEXT    NOT NULL,
    expires INTEGER NOT NULL
);

-- The running instances, each by its heartbeat.
CREATE TABLE instances (
    name      TEXT    PRIMARY KEY,
    version   TEXT    NOT NULL DEFAULT '',
    started   INTEGER NOT NULL,
    last_seen INTEGER NOT NULL
);
