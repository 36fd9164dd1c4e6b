-- +goose Up
-- 0008: placeholder so that this branch's 0012 runs alone (versions have no gaps); the lead drops it for the branch that owns 0008.
SELECT 1;
