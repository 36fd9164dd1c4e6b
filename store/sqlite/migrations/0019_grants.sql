-- +goose Up
-- 0019: grants ("/approve TOKEN for 30m"): calls identical to one
-- approved call, in its conversation, run without asking until expires
-- (Unix nanoseconds). A table of their own, not a column of
-- standing_allows: a gatehouse from before this migration reading
-- standing_allows must never take a grant for an allow of every
-- conversation for ever. The id comes from standing_allows' sequence
-- (sqlite_sequence), so /rules and /unallow number both in one series.
-- call is the hex SHA-256 of tool, NUL, args: the key, arguments being
-- long. files binds the grant as standing_allows.files does. Expired
-- grants are deleted by the sweep that audits them.
CREATE TABLE grants (
    id         INTEGER PRIMARY KEY,
    tool       TEXT    NOT NULL,
    args       TEXT    NOT NULL,
    call       TEXT    NOT NULL,
    conv       TEXT    NOT NULL,
    granted_by TEXT    NOT NULL,
    granted    INTEGER NOT NULL,
    expires    INTEGER NOT NULL,
    files      TEXT    NOT NULL,
    UNIQUE (conv, call, granted_by)
);
CREATE INDEX grants_expires ON grants (expires);
