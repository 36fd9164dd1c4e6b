-- +goose Up
-- 0003: workspace checkpoints taken before changing tool calls (/undo).
-- File contents are blobs in a directory next to the database, named by
-- SHA-256; files is the checkpoint's whole manifest, gzip-compressed JSON,
-- so that a checkpoint of a large workspace is one row.

CREATE TABLE checkpoints (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    conv         TEXT    NOT NULL,           -- Conversation.Key()
    conv_gateway TEXT    NOT NULL,
    conv_chat    TEXT    NOT NULL,
    conv_thread  TEXT    NOT NULL DEFAULT '',
    tool         TEXT    NOT NULL,
    args         TEXT    NOT NULL,
    call_id      TEXT    NOT NULL DEFAULT '',
    requested_by TEXT    NOT NULL,
    approval     TEXT    NOT NULL DEFAULT '',
    created      INTEGER NOT NULL,
    undone       INTEGER NOT NULL DEFAULT 0,
    undone_by    TEXT    NOT NULL DEFAULT '',
    added        INTEGER NOT NULL DEFAULT 0,
    files        BLOB    NOT NULL
);
CREATE INDEX checkpoints_conv ON checkpoints (conv, id);
