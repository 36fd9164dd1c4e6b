-- +goose Up
-- 0024: who reserved each send slot (store/postgres's 0024). Only a shared
-- store uses this column: it is here so that both drivers keep one schema.
ALTER TABLE send_slots ADD COLUMN owned BLOB NOT NULL DEFAULT x'';
