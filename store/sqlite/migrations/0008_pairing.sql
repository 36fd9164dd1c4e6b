-- +goose Up
-- 0008: pairing (gateways.<name>.pairing). Portable SQL (PostgreSQL's 0008
-- is the same with BIGINT for INTEGER). Times are Unix nanoseconds.

-- The codes handed to strangers, one per identity while it is valid; at
-- most 100 are kept (the store deletes the oldest past that). code is kept
-- to hand the same one out again; /pair finds a code by code_hash (hex
-- SHA-256), compared in constant time.
CREATE TABLE pairing_codes (
    identity  TEXT    PRIMARY KEY,
    seq       INTEGER NOT NULL UNIQUE,  -- order of hand-out: the oldest go first
    conv      TEXT    NOT NULL,  -- the conversation it was handed out in
    code      TEXT    NOT NULL,
    code_hash TEXT    NOT NULL UNIQUE,
    created   INTEGER NOT NULL,
    expires   INTEGER NOT NULL
);

-- The identities paired, with who paired them and when: each is on its
-- gateway's allow list while that gateway's pairing is on.
CREATE TABLE paired (
    identity  TEXT    PRIMARY KEY,
    conv      TEXT    NOT NULL,  -- where the newcomer asked, and was told
    paired_by TEXT    NOT NULL,
    paired_at INTEGER NOT NULL
);
