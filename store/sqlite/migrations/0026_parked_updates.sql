-- +goose Up
-- 0026: platform updates a gateway confirmed to its platform while their
-- turn still ran (store.Parking), kept until the turn is done so that a
-- restarted gateway hands them over again. body is the update's raw bytes
-- (BLOB: any byte); parked is when it was parked, Unix nanoseconds (Prune
-- forgets rows older than store.ParkedKeep).
CREATE TABLE parked_updates (
    scope  TEXT    NOT NULL,
    id     INTEGER NOT NULL,
    body   BLOB    NOT NULL,
    parked INTEGER NOT NULL,
    PRIMARY KEY (scope, id)
) WITHOUT ROWID;
