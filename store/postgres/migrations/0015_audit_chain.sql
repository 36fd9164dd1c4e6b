-- +goose Up
-- 0017: the audit log as a hash chain (store/auditchain; store/sqlite's
-- 0017). Each row carries prev_hash, the SHA-256 of the row before it, and
-- hash, its own (lowercase hex); the rows already written carry '' and are
-- counted by the anchor: audit_chain's one row records the last of them
-- (anchor_id) and how many there are (anchor_rows), and then the newest
-- chained row (head_id, head_hash; head_hash '' before any). Each append
-- locks that row (SELECT ... FOR UPDATE), so that the appends of every
-- instance take their ids and links in one order: one chain. audit.token
-- names the approval an entry is about ('' for the rows before and for
-- entries about no approval), for /audit TOKEN.
ALTER TABLE audit ADD COLUMN token TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN prev_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN hash TEXT NOT NULL DEFAULT '';
CREATE INDEX audit_token ON audit (token) WHERE token <> '';
CREATE INDEX audit_conv ON audit (conv, id);
CREATE TABLE audit_chain (
    one         INTEGER PRIMARY KEY CHECK (one = 1),
    anchor_id   BIGINT  NOT NULL,
    anchor_rows BIGINT  NOT NULL,
    head_id     BIGINT  NOT NULL,
    head_hash   TEXT    NOT NULL
);
INSERT INTO audit_chain (one, anchor_id, anchor_rows, head_id, head_hash)
    SELECT 1, COALESCE(MAX(id), 0), COUNT(*), COALESCE(MAX(id), 0), '' FROM audit;
