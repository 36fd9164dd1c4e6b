-- +goose Up
-- 0002: a standing allow binds the workspace files its arguments name.
-- files is a JSON object, path → "sha256:<hex>" | "absent" | "dir" | "other";
-- NULL for allows stored before: they bind nothing, so every file their
-- arguments name counts as changed and the call is held again.

ALTER TABLE standing_allows ADD COLUMN files TEXT;
