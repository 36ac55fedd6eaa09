-- Version 2: the run-request queue the workers drain (package
-- runtime/postgres/workers). A request is queued, then running under a
-- worker's claim until claim_until (renewed while it runs; a dead worker's
-- request is claimed again after it), then it ends with an outcome.
CREATE TABLE ilmek_requests (
	id           bigserial   PRIMARY KEY,
	thread_id    text        NOT NULL,
	graph        text        NOT NULL,
	kind         text        NOT NULL,            -- start, resume
	input        bytea,
	policy       text        NOT NULL,
	state        text        NOT NULL DEFAULT 'queued', -- queued, running, done, interrupted, error, aborted, cancelled
	claim        bigint      NOT NULL DEFAULT 0,  -- fences a claim's updates
	worker       text        NOT NULL DEFAULT '',
	claim_until  timestamptz,
	base_cp      text,                            -- the thread's latest checkpoint when first claimed
	cancel       boolean     NOT NULL DEFAULT false,
	result       bytea,                           -- the outcome as JSON
	error        text        NOT NULL DEFAULT '',
	created      timestamptz NOT NULL DEFAULT clock_timestamp(),
	updated      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX ilmek_requests_active ON ilmek_requests (thread_id, id) WHERE state IN ('queued', 'running');
CREATE INDEX ilmek_requests_claimable ON ilmek_requests (id) WHERE state IN ('queued', 'running');
