-- +goose Up
-- 0019: grants ("/approve TOKEN for 30m"; store/sqlite's 0019): calls
-- identical to one approved call, in its conversation, run without asking
-- until expires (Unix nanoseconds). A table of their own, not a column
-- of standing_allows: an instance from before this migration, still
-- running beside upgraded ones, reads standing_allows and must never take
-- a grant for an allow of every conversation for ever. The id is drawn
-- from standing_allows' identity sequence, so /rules and /unallow number
-- both in one series across instances. call is the hex SHA-256 of tool,
-- NUL, args: the key (arguments are too long for a btree entry). files
-- binds the grant as standing_allows.files does. Expired grants are
-- deleted by the sweep that audits them (DELETE … RETURNING: once).
CREATE TABLE grants (
    id         BIGINT  PRIMARY KEY DEFAULT nextval(pg_get_serial_sequence('standing_allows', 'id')::regclass),
    tool       TEXT    NOT NULL,
    args       TEXT    NOT NULL,
    call       TEXT    NOT NULL,
    conv       TEXT    NOT NULL,
    granted_by TEXT    NOT NULL,
    granted    BIGINT  NOT NULL,
    expires    BIGINT  NOT NULL,
    files      TEXT    NOT NULL,
    UNIQUE (conv, call, granted_by)
);
CREATE INDEX grants_expires ON grants (expires);
