-- +goose Up
-- 0012: nothing for SQLite. PostgreSQL's 0012 keeps checkpoint blobs in
-- the database that several instances share; one instance on SQLite keeps
-- them in the directory beside its file (internal/checkpoint), as before.
SELECT 1;
