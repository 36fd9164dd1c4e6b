-- +goose Up
-- 0016 (0020 as assigned; migrate refuses a gap, so renumber at merge): webhook deliveries recorded before they are answered, keyed by the
-- sender's identity for the delivery, so that a redelivery starts nothing
-- on any instance; and the thread each incident of a webhook runs in.
CREATE TABLE webhook_deliveries (
	hook     TEXT NOT NULL,
	id       TEXT NOT NULL,
	instance TEXT NOT NULL,
	claimed  BIGINT NOT NULL,
	done     INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (hook, id)
);
CREATE INDEX webhook_deliveries_claimed ON webhook_deliveries (claimed);
CREATE TABLE webhook_threads (
	hook     TEXT NOT NULL,
	incident TEXT NOT NULL,
	conv     TEXT NOT NULL,
	created  BIGINT NOT NULL,
	PRIMARY KEY (hook, incident)
);
CREATE INDEX webhook_threads_created ON webhook_threads (created);
