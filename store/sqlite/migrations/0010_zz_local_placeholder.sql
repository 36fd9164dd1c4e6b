-- +goose Up
-- Placeholder for version 0010, which another branch of issue 22/24 owns;
-- kept only so that this branch's 0013 is contiguous. Drop it when merging.
SELECT 1;
