-- +goose Up
-- 0020: a placeholder on branch pgwrites only, so that its 0022 numbers
-- without gaps; 0020 is another branch's. Drop this file at merge.
SELECT 1;
