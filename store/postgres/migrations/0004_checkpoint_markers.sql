-- +goose Up
-- 0004: a changing call that ran without a checkpoint leaves a marker row:
-- no_checkpoint says why, files is an empty manifest.

ALTER TABLE checkpoints ADD COLUMN no_checkpoint TEXT NOT NULL DEFAULT '';
