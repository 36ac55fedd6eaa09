-- Version 7: the workers wake parked threads (runtime/postgres/workers).
-- A worker's timer scan queues one request of kind 'wake' for a thread
-- whose timer or interrupt deadline has passed; the unique index keeps it
-- to one active wake request per thread however many workers scan, and
-- the partial index on the threads' rows keeps the scan to the waiting
-- threads.
CREATE UNIQUE INDEX ilmek_requests_one_wake ON ilmek_requests (thread_id) WHERE kind = 'wake' AND state IN ('queued', 'running');
CREATE INDEX ilmek_threads_waiting ON ilmek_threads (thread_id) WHERE status IN ('parked', 'interrupted');
