-- Version 6: slimmer checkpoint rows, and two b-trees written per
-- checkpoint instead of five (the table, its AUTOINCREMENT counter and
-- three indexes). The table is clustered by (thread_id, seq), seq now
-- counting each thread's checkpoints (the latest is the thread's last
-- row, and a chain of deltas is a run of rows); one index finds a
-- checkpoint by id and keeps ids unique within a thread. What rows
-- repeated is stored once or implied: the graph version (fingerprint,
-- format, migrated_from) is a row of ilmek_versions that vid names; a
-- NULL plan_id is the row's id, a NULL base_id the row's parent_id (a
-- delta of its parent), '' still a full snapshot; snap_seq is the seq
-- of the snapshot a delta's chain starts at (0 for a snapshot) instead
-- of its id. The checkpoints stored keep their seq numbers, which keep
-- their order within each thread.
CREATE TABLE ilmek_versions (
	vid           INTEGER PRIMARY KEY,
	fingerprint   TEXT    NOT NULL,
	format        INTEGER NOT NULL,
	migrated_from TEXT    NOT NULL,
	UNIQUE (fingerprint, format, migrated_from)
);
INSERT INTO ilmek_versions (fingerprint, format, migrated_from)
SELECT DISTINCT fingerprint, format, migrated_from FROM ilmek_checkpoints ORDER BY 1, 2, 3;
CREATE TABLE ilmek_checkpoints_6 (
	thread_id   TEXT    NOT NULL,
	seq         INTEGER NOT NULL,
	id          TEXT    NOT NULL,
	parent_id   TEXT    NOT NULL DEFAULT '',
	plan_id     TEXT,
	step        INTEGER NOT NULL,
	created_ns  INTEGER NOT NULL,
	channels    BLOB,
	next        BLOB,
	pending     BLOB,
	vid         INTEGER NOT NULL,
	base_id     TEXT,
	snap_seq    INTEGER NOT NULL DEFAULT 0,
	depth       INTEGER NOT NULL DEFAULT 0,
	chain_bytes INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (thread_id, seq)
) WITHOUT ROWID;
INSERT INTO ilmek_checkpoints_6 (thread_id, seq, id, parent_id, plan_id, step, created_ns, channels, next, pending, vid, base_id, snap_seq, depth, chain_bytes)
SELECT c.thread_id, c.seq, c.id, c.parent_id,
	CASE WHEN c.plan_id = c.id THEN NULL ELSE c.plan_id END,
	c.step, c.created_ns, c.channels, c.next, c.pending,
	(SELECT v.vid FROM ilmek_versions v WHERE v.fingerprint = c.fingerprint AND v.format = c.format AND v.migrated_from = c.migrated_from),
	CASE WHEN c.base_id <> '' AND c.base_id = c.parent_id THEN NULL ELSE c.base_id END,
	CASE WHEN c.base_id = '' THEN 0
	     ELSE coalesce((SELECT s.seq FROM ilmek_checkpoints s WHERE s.thread_id = c.thread_id AND s.id = c.snap_id), 0) END,
	c.depth, c.chain_bytes
FROM ilmek_checkpoints c;
DROP TABLE ilmek_checkpoints;
DELETE FROM sqlite_sequence WHERE name = 'ilmek_checkpoints';
ALTER TABLE ilmek_checkpoints_6 RENAME TO ilmek_checkpoints;
CREATE UNIQUE INDEX ilmek_checkpoints_id ON ilmek_checkpoints (thread_id, id);
CREATE TRIGGER ilmek_threads_touch AFTER INSERT ON ilmek_checkpoints BEGIN
	INSERT INTO ilmek_threads (thread_id, updated_ns) VALUES (NEW.thread_id, NEW.created_ns)
	ON CONFLICT (thread_id) DO UPDATE SET updated_ns = max(updated_ns, excluded.updated_ns);
END;
