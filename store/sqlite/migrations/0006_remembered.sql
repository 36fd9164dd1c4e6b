-- +goose Up
-- 0006: keys a gateway remembers across restarts, by scope (the Slack
-- threads the bot takes part in). at is the latest Remember (unix
-- nanoseconds); Prune forgets keys past store.MemoryKeep and the oldest
-- past store.MemoryMax in a scope.

CREATE TABLE remembered (
    scope TEXT NOT NULL,
    key   TEXT NOT NULL,
    at    INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
);

CREATE INDEX remembered_scope_at ON remembered (scope, at);
