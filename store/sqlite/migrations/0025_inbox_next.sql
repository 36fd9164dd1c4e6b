-- +goose Up
-- 0025: the inbox entry a finished turn handed its slot to (store/postgres's
-- 0025). Only a shared store uses this column: it is here so that both
-- drivers keep one schema.
ALTER TABLE inbox ADD COLUMN next INTEGER NOT NULL DEFAULT 0;
ALTER TABLE inbox ADD COLUMN next_process TEXT NOT NULL DEFAULT '';
ALTER TABLE inbox ADD COLUMN next_ttl INTEGER NOT NULL DEFAULT 0;
