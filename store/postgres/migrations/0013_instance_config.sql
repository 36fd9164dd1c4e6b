-- +goose Up
-- 0013: each instance's configuration fingerprint beside its heartbeat
-- (store/sqlite's 0013): a JSON object of top-level key path → hash of
-- that key's redacted value, so that an instance starting on a shared
-- database can name the keys another instance alive has set otherwise,
-- and no value (let alone a secret) is stored. '' until the instance
-- records it.
ALTER TABLE instances ADD COLUMN config TEXT NOT NULL DEFAULT '';

