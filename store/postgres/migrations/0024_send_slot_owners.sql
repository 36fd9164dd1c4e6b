-- +goose Up
-- 0024: who reserved each send slot (store/sqlite's 0024 has the same
-- column, unused: SQLite is not shared). owned holds (time, owner) pairs,
-- 16 bytes each (big-endian int64 nanoseconds, then the owner's 64-bit
-- FNV-1a hash of its instance name), for the times in times that the
-- instance reserving them wrote: a run of one instance's own requests may
-- use a shorter window (store.SendLimit.Own) than a run that mixes
-- instances. A time in times without its pair (written by an older
-- gatehouse) counts as another instance's.
ALTER TABLE send_slots ADD COLUMN owned BYTEA NOT NULL DEFAULT ''::bytea;

