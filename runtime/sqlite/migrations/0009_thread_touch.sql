-- Version 9: a checkpoint insert touches its thread's row (updated_ns)
-- only when the row is more than 100 ms older than the checkpoint, or
-- missing. The row and its index by updated_ns were two of the four pages
-- every superstep's commit wrote; now a run of many supersteps rewrites
-- them about once every 100 ms. ThreadInfo.Updated lags a writing run's
-- latest checkpoint by less than 100 ms, and the run's outcome, recorded
-- with its last write, sets it when the run ends.
DROP TRIGGER ilmek_threads_touch;
CREATE TRIGGER ilmek_threads_touch AFTER INSERT ON ilmek_checkpoints
WHEN NOT EXISTS (SELECT 1 FROM ilmek_threads WHERE thread_id = NEW.thread_id AND updated_ns > NEW.created_ns - 100000000)
BEGIN
	INSERT INTO ilmek_threads (thread_id, updated_ns) VALUES (NEW.thread_id, NEW.created_ns)
	ON CONFLICT (thread_id) DO UPDATE SET updated_ns = max(updated_ns, excluded.updated_ns);
END;
