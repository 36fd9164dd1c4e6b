-- +goose Up
-- 0001: history, usage, approvals, audit, cursors, standing allows (the
-- same versions as store/sqlite's migrations, in PostgreSQL's dialect).
-- Times are Unix nanoseconds (BIGINT); 0 means unset.

CREATE TABLE messages (
    id           BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conv         TEXT    NOT NULL,
    role         TEXT    NOT NULL,
    content      TEXT    NOT NULL DEFAULT '',
    tool_calls   TEXT,                       -- JSON array, NULL when none
    tool_call_id TEXT    NOT NULL DEFAULT '',
    created      BIGINT  NOT NULL
);
CREATE INDEX messages_conv ON messages (conv, id);
CREATE INDEX messages_created ON messages (created);

CREATE TABLE usage (
    conv              TEXT    NOT NULL,
    day               TEXT    NOT NULL,      -- UTC, YYYY-MM-DD
    prompt_tokens     BIGINT  NOT NULL DEFAULT 0,
    completion_tokens BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (conv, day)
);

CREATE TABLE approvals (
    seq          BIGINT  GENERATED ALWAYS AS IDENTITY, -- the order of creation
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
    created      BIGINT  NOT NULL,
    expires      BIGINT  NOT NULL,
    status       TEXT    NOT NULL,
    resolved_by  TEXT    NOT NULL DEFAULT '',
    resolved_at  BIGINT  NOT NULL DEFAULT 0,
    note         TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX approvals_status ON approvals (status, created);

CREATE TABLE audit (
    id           BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at           BIGINT  NOT NULL,
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
CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit log is append-only';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
    FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
    FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
    FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();

CREATE TABLE cursors (
    key     TEXT    PRIMARY KEY,
    value   TEXT    NOT NULL,
    updated BIGINT  NOT NULL
);

CREATE TABLE standing_allows (
    id       BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tool     TEXT    NOT NULL,
    args     TEXT    NOT NULL,
    added_by TEXT    NOT NULL,
    added    BIGINT  NOT NULL,
    conv     TEXT    NOT NULL DEFAULT '',
    UNIQUE (tool, args)
);
