-- Version 5: the runs of a run request. A worker records each run it
-- starts for a request (a request whose worker died runs again, so a
-- request may have several), so that any process can read the request's
-- events from the event log (runtime.EventStore, by run id).
ALTER TABLE ilmek_requests ADD COLUMN run_ids text[] NOT NULL DEFAULT '{}';
