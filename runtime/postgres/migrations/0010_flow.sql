-- Version 10: flow control of the run-request queue
-- (runtime/postgres/workers). A request has a priority (higher first), a
-- partition key (a tenant; '' for none) and a fair sequence number: the
-- claim takes the highest priority, then the lowest fair_seq, then the
-- oldest. Submit numbers a partition's requests from its last active one,
-- but never below the lowest active number of their priority, so a
-- partition that queued a thousand requests does not keep another's
-- first request waiting behind them.
ALTER TABLE ilmek_requests
	ADD COLUMN priority      integer NOT NULL DEFAULT 0,
	ADD COLUMN partition_key text    NOT NULL DEFAULT '',
	ADD COLUMN fair_seq      bigint  NOT NULL DEFAULT 0;
DROP INDEX ilmek_requests_claimable;
CREATE INDEX ilmek_requests_claim_order ON ilmek_requests (priority DESC, fair_seq, id) WHERE state IN ('queued', 'running');
CREATE INDEX ilmek_requests_partition ON ilmek_requests (partition_key, fair_seq) WHERE state IN ('queued', 'running');
-- The limits of a graph (scope 'graph') or a partition (scope
-- 'partition'; key '*' is the template every partition without a row of
-- its own copies at its first submit, inherited = true). running counts
-- the running requests the limit covers: a claim that moves a request
-- from queued to running adds one, its end takes one away. The token
-- bucket holds tokens as of refilled, refilling at rate per second up to
-- burst; a claim from queued takes one.
CREATE TABLE ilmek_flow (
	scope       text             NOT NULL,
	key         text             NOT NULL,
	concurrency integer          NOT NULL DEFAULT 0, -- 0: no limit
	running     integer          NOT NULL DEFAULT 0,
	rate        double precision NOT NULL DEFAULT 0, -- requests started per second; 0: no limit
	burst       double precision NOT NULL DEFAULT 1,
	tokens      double precision NOT NULL DEFAULT 0,
	refilled    timestamptz      NOT NULL DEFAULT clock_timestamp(),
	inherited   boolean          NOT NULL DEFAULT false,
	PRIMARY KEY (scope, key)
);
