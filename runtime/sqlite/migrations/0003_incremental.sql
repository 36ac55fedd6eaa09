-- Version 3: a checkpoint can be stored as the delta of another
-- (checkpoint.DeltaCheckpointer): base_id names the checkpoint the row's
-- channels column changes (its channels then hold the JSON array of
-- checkpoint.ChannelWrite), snap_id the full snapshot its chain of deltas
-- starts at, depth and chain_bytes the chain's length and delta bytes up to
-- the row (what compaction is decided on). The checkpoints already stored
-- are full snapshots: every new column's default.
ALTER TABLE ilmek_checkpoints ADD COLUMN base_id TEXT NOT NULL DEFAULT '';
ALTER TABLE ilmek_checkpoints ADD COLUMN snap_id TEXT NOT NULL DEFAULT '';
ALTER TABLE ilmek_checkpoints ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ilmek_checkpoints ADD COLUMN chain_bytes INTEGER NOT NULL DEFAULT 0;
CREATE INDEX ilmek_checkpoints_chain ON ilmek_checkpoints (thread_id, snap_id);
-- threads --
-- Thread records and the event log: ilmek_threads, one row per thread
-- with its metadata (a JSON object of strings, as text), the outcome of
-- its last run and the interrupts it paused on (JSON), and when it was
-- last written, kept by a trigger on every checkpoint insert; and
-- ilmek_events, the bounded event log of each run. Every thread already
-- stored gets its row: its latest checkpoint's time as its update time,
-- and, read from that checkpoint, the outcome "interrupted" with its
-- interrupts when it has pending ones, "done" when nothing is planned,
-- none otherwise. (A pre-release version 3 file lacks this part only; it
-- gets it on Open.)
CREATE TABLE IF NOT EXISTS ilmek_threads (
	thread_id  TEXT    NOT NULL PRIMARY KEY,
	meta       TEXT,
	status     TEXT    NOT NULL DEFAULT '',
	run_id     TEXT    NOT NULL DEFAULT '',
	ended_ns   INTEGER NOT NULL DEFAULT 0,
	error      TEXT    NOT NULL DEFAULT '',
	pending    BLOB,
	updated_ns INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ilmek_threads_updated ON ilmek_threads (updated_ns, thread_id);
CREATE TRIGGER IF NOT EXISTS ilmek_threads_touch AFTER INSERT ON ilmek_checkpoints BEGIN
	INSERT INTO ilmek_threads (thread_id, updated_ns) VALUES (NEW.thread_id, NEW.created_ns)
	ON CONFLICT (thread_id) DO UPDATE SET updated_ns = max(updated_ns, excluded.updated_ns);
END;
CREATE TABLE IF NOT EXISTS ilmek_events (
	run_id    TEXT    NOT NULL,
	seq       INTEGER NOT NULL,
	thread_id TEXT    NOT NULL,
	time_ns   INTEGER NOT NULL,
	kind      TEXT    NOT NULL,
	data      BLOB    NOT NULL,
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ilmek_events_thread ON ilmek_events (thread_id, time_ns);
INSERT INTO ilmek_threads (thread_id, status, pending, updated_ns)
SELECT c.thread_id,
	CASE WHEN coalesce(CAST(c.pending AS TEXT), 'null') NOT IN ('null', '[]') THEN 'interrupted'
	     WHEN coalesce(CAST(c.next AS TEXT), 'null') IN ('null', '[]') THEN 'done'
	     ELSE '' END,
	CASE WHEN coalesce(CAST(c.pending AS TEXT), 'null') NOT IN ('null', '[]') THEN c.pending END,
	m.updated
FROM ilmek_checkpoints c
JOIN (SELECT thread_id, max(seq) AS seq, max(created_ns) AS updated FROM ilmek_checkpoints GROUP BY thread_id) m ON c.seq = m.seq
WHERE true
ON CONFLICT (thread_id) DO NOTHING;
