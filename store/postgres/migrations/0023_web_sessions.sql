-- +goose Up
-- 0023: the web console's one-time sign-in links and its sessions. Only
-- the hex SHA-256 of a link's token and of a session's id is stored: a
-- copy of the database signs nobody in. Times are Unix nanoseconds; the
-- expired rows are deleted when new ones are added.
CREATE TABLE web_links (
    hash     TEXT    PRIMARY KEY,
    identity TEXT    NOT NULL,
    created  BIGINT  NOT NULL,
    expires  BIGINT  NOT NULL
);
CREATE TABLE web_sessions (
    hash     TEXT    PRIMARY KEY,
    identity TEXT    NOT NULL,
    created  BIGINT  NOT NULL,
    expires  BIGINT  NOT NULL
);
CREATE INDEX web_sessions_identity ON web_sessions (identity);
CREATE INDEX web_sessions_expires ON web_sessions (expires);
