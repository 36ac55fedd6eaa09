-- Version 12: the checkpoints in commit order. The table was clustered
-- by (thread_id, seq), so each thread's new row went into a page of its
-- own thread's rows, and a transaction that commits the supersteps of
-- many threads at once (the group commit) wrote a page per thread. Rows
-- now go at the table's end, rid counting them as they are inserted, and
-- the rows of one transaction share pages; a unique index on (thread_id,
-- seq) finds a thread's rows in order, as the primary key did, and keeps
-- each thread's seq unique. Its entries are small, so a thread's new
-- entry rewrites a page of small entries rather than of whole rows. The
-- checkpoints stored keep their seq numbers and are copied thread by
-- thread, in seq order.
CREATE TABLE ilmek_checkpoints_12 (
	rid         INTEGER PRIMARY KEY,
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
	big         INTEGER
);
INSERT INTO ilmek_checkpoints_12 (thread_id, seq, id, parent_id, plan_id, step, created_ns, channels, next, pending, vid, base_id, snap_seq, depth, chain_bytes, big)
SELECT thread_id, seq, id, parent_id, plan_id, step, created_ns, channels, next, pending, vid, base_id, snap_seq, depth, chain_bytes, big
FROM ilmek_checkpoints ORDER BY thread_id, seq;
-- Dropping the table drops its index and triggers before it deletes its
-- rows, so no trigger deletes the channels the rows name.
DROP TABLE ilmek_checkpoints;
ALTER TABLE ilmek_checkpoints_12 RENAME TO ilmek_checkpoints;
CREATE UNIQUE INDEX ilmek_checkpoints_seq ON ilmek_checkpoints (thread_id, seq);
CREATE UNIQUE INDEX ilmek_checkpoints_id ON ilmek_checkpoints (id, thread_id);
CREATE TRIGGER ilmek_threads_touch AFTER INSERT ON ilmek_checkpoints
WHEN NOT EXISTS (SELECT 1 FROM ilmek_threads WHERE thread_id = NEW.thread_id AND updated_ns > NEW.created_ns - 100000000)
BEGIN
	INSERT INTO ilmek_threads (thread_id, updated_ns) VALUES (NEW.thread_id, NEW.created_ns)
	ON CONFLICT (thread_id) DO UPDATE SET updated_ns = max(updated_ns, excluded.updated_ns);
END;
CREATE TRIGGER ilmek_channels_drop AFTER DELETE ON ilmek_checkpoints WHEN OLD.big IS NOT NULL BEGIN
	DELETE FROM ilmek_channels WHERE rid = OLD.big;
END;
CREATE TRIGGER ilmek_channels_replace AFTER UPDATE OF big ON ilmek_checkpoints WHEN OLD.big IS NOT NULL AND OLD.big IS NOT NEW.big BEGIN
	DELETE FROM ilmek_channels WHERE rid = OLD.big;
END;
