-- Version 15: a run request may name the checkpoint it expects the thread
-- to be at (workers.Request.ExpectedLatest), so that a start or a resume
-- prepared against what a client saw runs only on the thread as the
-- client saw it: a resume retried after its reply was lost, when the
-- first one already answered and the thread asked again, ends refused
-- instead of answering the next question. NULL: no expectation.
ALTER TABLE ilmek_requests ADD COLUMN expected_latest text;
