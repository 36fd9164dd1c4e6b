-- +goose Up
-- 0005: each request's cost in USD, at the price of the provider that
-- answered it when it was recorded, adds up per conversation and day.
-- Rows from before cost 0: their provider was not recorded, so they are
-- not priced after the fact.

ALTER TABLE usage ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
