-- +goose Up
-- 0018: a placeholder on branch grants only, so that its 0019 numbers
-- without gaps; 0018 is another branch's. Drop this file at merge.
SELECT 1;
