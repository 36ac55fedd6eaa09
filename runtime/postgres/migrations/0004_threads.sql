-- Version 4: threads can be found, and runs keep their events.
--
-- ilmek_threads holds one row per thread: its metadata (a JSON object of
-- strings; runtime.WithThreadMeta), the outcome of its last run (status,
-- run id, end time, error text) and the interrupts it paused on (JSON),
-- and when it was last written (updated_ns), which a trigger keeps on
-- every checkpoint insert. ListThreads reads it newest first; thread ids
-- compare bytewise (COLLATE "C"), as in every other backend. Threads
-- stored before get a row from their latest checkpoint: interrupted (with
-- its interrupts) when it has pending ones, done when nothing is planned,
-- no outcome otherwise.
--
-- ilmek_events is the bounded, durable event log of each run
-- (runtime.EventStore), so a client can reconnect to a run's stream from
-- another process.
CREATE TABLE ilmek_threads (
	thread_id  text COLLATE "C" PRIMARY KEY,
	meta       jsonb  NOT NULL DEFAULT '{}',
	status     text   NOT NULL DEFAULT '',
	run_id     text   NOT NULL DEFAULT '',
	ended_ns   bigint NOT NULL DEFAULT 0,
	error      text   NOT NULL DEFAULT '',
	pending    bytea,
	updated_ns bigint NOT NULL DEFAULT 0
);
CREATE INDEX ilmek_threads_updated ON ilmek_threads (updated_ns DESC, thread_id DESC);
CREATE INDEX ilmek_threads_meta ON ilmek_threads USING gin (meta jsonb_path_ops);

CREATE FUNCTION ilmek_threads_touch() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
	INSERT INTO ilmek_threads (thread_id, updated_ns) VALUES (NEW.thread_id, NEW.created_ns)
	ON CONFLICT (thread_id) DO UPDATE SET updated_ns = greatest(ilmek_threads.updated_ns, excluded.updated_ns);
	RETURN NULL;
END
$$;
CREATE TRIGGER ilmek_threads_touch AFTER INSERT ON ilmek_checkpoints
	FOR EACH ROW EXECUTE FUNCTION ilmek_threads_touch();

INSERT INTO ilmek_threads (thread_id, status, pending, updated_ns)
SELECT thread_id,
	CASE WHEN coalesce(convert_from(pending, 'UTF8'), 'null') NOT IN ('null', '[]') THEN 'interrupted'
	     WHEN coalesce(convert_from(next, 'UTF8'), 'null') IN ('null', '[]') THEN 'done'
	     ELSE '' END,
	CASE WHEN coalesce(convert_from(pending, 'UTF8'), 'null') NOT IN ('null', '[]') THEN pending END,
	updated
FROM (SELECT DISTINCT ON (thread_id) thread_id, pending, next, max(created_ns) OVER (PARTITION BY thread_id) AS updated
	FROM ilmek_checkpoints ORDER BY thread_id, seq DESC) latest;

CREATE TABLE ilmek_events (
	run_id    text   NOT NULL,
	seq       bigint NOT NULL,
	thread_id text   NOT NULL,
	time_ns   bigint NOT NULL,
	kind      text   NOT NULL,
	data      bytea  NOT NULL,
	PRIMARY KEY (run_id, seq)
);
CREATE INDEX ilmek_events_thread ON ilmek_events (thread_id, time_ns);
