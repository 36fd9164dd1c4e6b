-- +goose Up
-- 0011: which instance runs an approved call (store/sqlite's 0011). A
-- claim to executing records the claiming instance's name (store.instance);
-- an executing approval whose instance's heartbeat is older than
-- store.lease_ttl is marked interrupted by another instance, and an
-- instance starting marks only its own earlier name's. '' is a claim made
-- before this migration (or by a store that does not record it).
ALTER TABLE approvals ADD COLUMN instance TEXT NOT NULL DEFAULT '';
