-- +goose Up
-- 0020: a placeholder on the webconsole branch (migrate refuses a gap);
-- the lead drops it at merge, when 0021 is renumbered.
SELECT 1;
