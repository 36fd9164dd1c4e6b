-- +goose Up
-- 0016: a placeholder on branch grants only, so that its 0019 numbers
-- without gaps; 0016 is another branch's. Drop this file at merge.
SELECT 1;
