-- Version 8: dead requests (runtime/postgres/workers). claims_log holds a
-- JSON object per run a claim of the request started: the claim's number,
-- its worker, when, and, for a claim given back to the queue, the error
-- and "released": true. A {"retry": true} entry marks a retry by hand.
-- Past a worker's MaxClaims claims that expired (their worker died or
-- stalled) since the last retry, the request ends in state 'dead'.
ALTER TABLE ilmek_requests ADD COLUMN claims_log jsonb NOT NULL DEFAULT '[]';
CREATE INDEX ilmek_requests_dead ON ilmek_requests (id) WHERE state = 'dead';
CREATE INDEX ilmek_requests_ended ON ilmek_requests (updated) WHERE state NOT IN ('queued', 'running', 'dead');
