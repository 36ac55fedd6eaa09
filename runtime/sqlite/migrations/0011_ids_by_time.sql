-- Version 11: the index that finds a checkpoint by id and keeps ids
-- unique within a thread is keyed (id, thread_id), no longer
-- (thread_id, id). An id the executor makes begins with its time, so a
-- new checkpoint's entry goes at the index's end whatever its thread:
-- the commits of many threads that share a transaction (the group
-- commit) share the index's last page, where each wrote a page of its
-- own thread's. Lookups name both columns, so they use it as before.
DROP INDEX ilmek_checkpoints_id;
CREATE UNIQUE INDEX ilmek_checkpoints_id ON ilmek_checkpoints (id, thread_id);
