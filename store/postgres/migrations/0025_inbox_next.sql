-- +goose Up
-- 0025: a finished turn hands this instance's freed turn slot to the next
-- message it will run, in the row write that marks it done (store/sqlite's
-- 0025 has the same column, unused: SQLite is not shared).
--
-- next is the inbox entry the holder of this done entry took, without a
-- claim of its own, when it marked this one done: the entry is its
-- holder's (as if claimed) while this row's expires is in the future, or
-- while the heartbeat of the holder's process next_process is younger
-- than next_ttl (the lease_ttl it was taken with), or until a renewal
-- claims it in its own row.
ALTER TABLE inbox ADD COLUMN next BIGINT NOT NULL DEFAULT 0;
ALTER TABLE inbox ADD COLUMN next_process TEXT NOT NULL DEFAULT '';
ALTER TABLE inbox ADD COLUMN next_ttl BIGINT NOT NULL DEFAULT 0;
CREATE INDEX inbox_next ON inbox (next) WHERE next <> 0;
