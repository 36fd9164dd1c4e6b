-- +goose Up
-- 0009: placeholder so that this branch's 0012 runs alone (versions have no gaps); the lead drops it for the branch that owns 0009.
SELECT 1;
