-- +goose Up
-- 0003: workspace checkpoints taken before changing tool calls (/undo).
-- files is the checkpoint's whole manifest, gzip-compressed JSON.

CREATE TABLE checkpoints (
    id           BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conv         TEXT    NOT NULL,           -- Conversation.Key()
    conv_gateway TEXT    NOT NULL,
    conv_chat    TEXT    NOT NULL,
    conv_thread  TEXT    NOT NULL DEFAULT '',
    tool         TEXT    NOT NULL,
    args         TEXT    NOT NULL,
    call_id      TEXT    NOT NULL DEFAULT '',
    requested_by TEXT    NOT NULL,
    approval     TEXT    NOT NULL DEFAULT '',
    created      BIGINT  NOT NULL,
    undone       BIGINT  NOT NULL DEFAULT 0,
    undone_by    TEXT    NOT NULL DEFAULT '',
    added        BIGINT  NOT NULL DEFAULT 0,
    files        BYTEA   NOT NULL
);
CREATE INDEX checkpoints_conv ON checkpoints (conv, id);
