-- +goose Up
-- 0026: platform updates a gateway confirmed to its platform while their
-- turn still ran (store.Parking), kept until the turn is done so that a
-- restarted gateway hands them over again (store/sqlite's 0026). body is
-- the update's raw bytes (bytea: any byte, never text); parked is when it
-- was parked, Unix nanoseconds (Prune forgets rows older than
-- store.ParkedKeep).
CREATE TABLE parked_updates (
    scope  TEXT   NOT NULL,
    id     BIGINT NOT NULL,
    body   BYTEA  NOT NULL,
    parked BIGINT NOT NULL,
    PRIMARY KEY (scope, id)
);
