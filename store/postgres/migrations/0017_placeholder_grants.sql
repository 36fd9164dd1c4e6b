-- +goose Up
-- 0017: a placeholder on branch grants only, so that its 0019 numbers
-- without gaps; 0017 is another branch's. Drop this file at merge.
SELECT 1;
