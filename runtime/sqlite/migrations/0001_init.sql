-- Version 1: checkpoints, journals and leases. seq orders a thread's
-- checkpoints by the time they were stored (AUTOINCREMENT never reuses a
-- number, also across processes), which is what "latest" means.
CREATE TABLE IF NOT EXISTS ilmek_checkpoints (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	thread_id  TEXT    NOT NULL,
	id         TEXT    NOT NULL,
	parent_id  TEXT    NOT NULL DEFAULT '',
	plan_id    TEXT    NOT NULL DEFAULT '',
	step       INTEGER NOT NULL,
	created_ns INTEGER NOT NULL,
	channels   BLOB,
	next       BLOB,
	pending    BLOB,
	UNIQUE (thread_id, id)
);
CREATE INDEX IF NOT EXISTS ilmek_checkpoints_latest ON ilmek_checkpoints (thread_id, seq);
CREATE TABLE IF NOT EXISTS ilmek_journals (
	thread_id TEXT NOT NULL,
	task_id   TEXT NOT NULL,
	entries   BLOB,
	PRIMARY KEY (thread_id, task_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ilmek_leases (
	thread_id  TEXT    NOT NULL PRIMARY KEY,
	owner      TEXT    NOT NULL,
	holder     TEXT    NOT NULL,
	expires_ns INTEGER NOT NULL
) WITHOUT ROWID;
