-- Version 12: a checkpoint insert touches its thread's row (updated_ns)
-- only when the row is more than 100 ms older than the checkpoint, or
-- missing. Every superstep's commit updated the row before: a new row
-- version and an entry in each of its indexes (updated_ns is indexed, so
-- the update was never HOT), and a dead row left for vacuum, a hundred
-- for a run of a hundred supersteps. Now a run rewrites it about once
-- every 100 ms. ThreadInfo.Updated lags a writing run's latest checkpoint
-- by less than 100 ms, and the run's outcome, recorded with its last
-- write, sets it when the run ends.
CREATE OR REPLACE FUNCTION ilmek_threads_touch() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM ilmek_threads WHERE thread_id = NEW.thread_id AND updated_ns > NEW.created_ns - 100000000) THEN
		INSERT INTO ilmek_threads (thread_id, updated_ns) VALUES (NEW.thread_id, NEW.created_ns)
		ON CONFLICT (thread_id) DO UPDATE SET updated_ns = greatest(ilmek_threads.updated_ns, excluded.updated_ns);
	END IF;
	RETURN NULL;
END
$$;
