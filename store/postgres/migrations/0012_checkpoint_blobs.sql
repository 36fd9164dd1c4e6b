-- +goose Up
-- 0012: the blobs of workspace checkpoints, in the database that several
-- instances share, so that /undo works from any of them (one instance on
-- SQLite keeps them in the directory beside its file). One row per
-- content, keyed by its hex SHA-256; used is when it was last stored or
-- found in use by a checkpoint being taken (Unix nanoseconds), so that a
-- collection by another instance spares it meanwhile.
CREATE TABLE checkpoint_blobs (
    hash    TEXT    PRIMARY KEY,
    size    BIGINT  NOT NULL,
    content BYTEA   NOT NULL,
    used    BIGINT  NOT NULL
);
