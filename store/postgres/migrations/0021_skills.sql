-- +goose Up
-- 0021 (0020 as assigned; main took 0020 for webhook thread claims): skills enabled by an approver, by the digest of their exact
-- content (every file of the folder), or disabled; shared by instances.
CREATE TABLE skills (
	name    TEXT PRIMARY KEY,
	digest  TEXT NOT NULL,
	enabled INTEGER NOT NULL,
	by_id   TEXT NOT NULL,
	at      BIGINT NOT NULL
);
