-- +goose Up
-- 0019: who is behind an instance's name, and which instance wrote each
-- audit entry (store/postgres's 0019). instances.process is a random id
-- each process draws at start and writes with its heartbeats, so that a
-- second live process started under a name already in use is refused
-- instead of taking the first's approved calls and leases for a dead
-- instance's ('' for a heartbeat of a gatehouse before 0019). audit.instance
-- is store.instance of the instance that wrote the entry on a shared
-- store ('' on SQLite, and for the entries written before).
ALTER TABLE instances ADD COLUMN process TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN instance TEXT NOT NULL DEFAULT '';
