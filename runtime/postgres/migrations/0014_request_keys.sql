-- Version 14: a run request may carry its client's key (workers.Request.Key),
-- unique per thread, so that a Submit retried after its reply was lost
-- (a dropped connection, a timeout) finds the request it made and queues
-- no second one: the same answers are not taken twice, nor the same
-- input run again. Requests without a key are not indexed.
ALTER TABLE ilmek_requests ADD COLUMN request_key text;
CREATE UNIQUE INDEX ilmek_requests_key ON ilmek_requests (thread_id, request_key) WHERE request_key IS NOT NULL;
