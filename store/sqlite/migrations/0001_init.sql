-- +goose Up
-- 0001: history, usage, approvals, audit, cursors, standing allows.
-- Times are Unix nanoseconds (INTEGER); 0 means unset.

CREATE TABLE messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    conv         TEXT    NOT NULL,
    role         TEXT    NOT NULL,
    content      TEXT    NOT NULL DEFAULT '',
    tool_calls   TEXT,                       -- JSON array, NULL when none
    tool_call_id TEXT    NOT NULL DEFAULT '',
    created      INTEGER NOT NULL
);
CREATE INDEX messages_conv ON messages (conv, id);
CREATE INDEX messages_created ON messages (created);

CREATE TABLE usage (
    conv              TEXT    NOT NULL,
    day               TEXT    NOT NULL,      -- UTC, YYYY-MM-DD
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (conv, day)
) WITHOUT ROWID;

CREATE TABLE approvals (
    token        TEXT    PRIMARY KEY,
    conv         TEXT    NOT NULL,           -- Conversation.Key()
    conv_gateway TEXT    NOT NULL,
    conv_chat    TEXT    NOT NULL,
    conv_thread  TEXT    NOT NULL DEFAULT '',
    requested_by TEXT    NOT NULL,
    call_id      TEXT    NOT NULL DEFAULT '',
    tool         TEXT    NOT NULL,
    args         TEXT    NOT NULL,
    digest       TEXT    NOT NULL,
    rule         TEXT    NOT NULL DEFAULT '',
    reason       TEXT    NOT NULL DEFAULT '',
    created      INTEGER NOT NULL,
    expires      INTEGER NOT NULL,
    status       TEXT    NOT NULL,
    resolved_by  TEXT    NOT NULL DEFAULT '',
    resolved_at  INTEGER NOT NULL DEFAULT 0,
    note         TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX approvals_status ON approvals (status, created);

CREATE TABLE audit (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    at           INTEGER NOT NULL,
    conv         TEXT    NOT NULL,
    tool         TEXT    NOT NULL,
    args         TEXT    NOT NULL,
    requested_by TEXT    NOT NULL,
    approved_by  TEXT    NOT NULL,
    outcome      TEXT    NOT NULL,
    detail       TEXT    NOT NULL
);
CREATE INDEX audit_at ON audit (at);
-- +goose StatementBegin
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
-- +goose StatementEnd

CREATE TABLE cursors (
    key     TEXT    PRIMARY KEY,
    value   TEXT    NOT NULL,
    updated INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE standing_allows (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    tool     TEXT    NOT NULL,
    args     TEXT    NOT NULL,
    added_by TEXT    NOT NULL,
    added    INTEGER NOT NULL,
    conv     TEXT    NOT NULL DEFAULT '',
    UNIQUE (tool, args)
);
