-- Version 1 of ilmek's tables. Run with search_path set to the store's
-- schema, inside the migration transaction.

-- seq orders a thread's checkpoints by the time they were Put, which is
-- what "latest" means.
CREATE TABLE ilmek_checkpoints (
	seq        bigserial PRIMARY KEY,
	thread_id  text   NOT NULL,
	id         text   NOT NULL,
	parent_id  text   NOT NULL DEFAULT '',
	plan_id    text   NOT NULL DEFAULT '',
	step       bigint NOT NULL,
	created_ns bigint NOT NULL,
	channels   bytea,
	next       bytea,
	pending    bytea,
	UNIQUE (thread_id, id)
);
CREATE INDEX ilmek_checkpoints_latest ON ilmek_checkpoints (thread_id, seq);

CREATE TABLE ilmek_journals (
	thread_id text NOT NULL,
	task_id   text NOT NULL,
	entries   bytea,
	PRIMARY KEY (thread_id, task_id)
);

-- One row per leased thread. epoch comes from ilmek_lease_epoch, so it only
-- grows, across takeovers and deletions: every fenced write names the epoch
-- it was leased under.
CREATE SEQUENCE ilmek_lease_epoch;
CREATE TABLE ilmek_leases (
	thread_id text        NOT NULL PRIMARY KEY,
	epoch     bigint      NOT NULL,
	owner     text        NOT NULL,
	expires   timestamptz NOT NULL
);
