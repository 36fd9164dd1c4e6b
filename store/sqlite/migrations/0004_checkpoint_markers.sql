-- +goose Up
-- 0004: a changing call that ran without a checkpoint (the workspace over a
-- limit, or an error) leaves a marker row: no_checkpoint says why, files is
-- an empty manifest. A marker is never restored to, but a restore to an
-- earlier checkpoint takes its call back, so /undo must know of it. Rows
-- from before are real checkpoints ('').

ALTER TABLE checkpoints ADD COLUMN no_checkpoint TEXT NOT NULL DEFAULT '';
