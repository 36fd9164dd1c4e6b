-- +goose Up
-- 0005: each request's cost in USD adds up per conversation and day.

ALTER TABLE usage ADD COLUMN cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0;
