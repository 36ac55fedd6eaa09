-- Version 9: stored schedules (checkpoint.ScheduleStore) and their
-- firings. A worker fires a due schedule in one transaction: it locks the
-- schedule's row, inserts one firing row per tick with the tick's run
-- request, and moves last_tick; the primary key (schedule, tick) keeps a
-- tick to one firing however many workers race or restart; next_tick
-- keeps each worker's scan to the schedules that are due.
CREATE TABLE ilmek_schedules (
	name         text        PRIMARY KEY,
	graph        text        NOT NULL,
	cron         text        NOT NULL DEFAULT '',
	time_zone    text        NOT NULL DEFAULT '',
	every_ns     bigint      NOT NULL DEFAULT 0,
	input        bytea,
	meta         jsonb       NOT NULL DEFAULT '{}', -- metadata of every firing's thread
	thread       text        NOT NULL,
	overlap      text        NOT NULL,            -- reject (skip), enqueue, cancel-and-replace
	catch_up     text        NOT NULL,            -- none, one, all
	max_catch_up integer     NOT NULL,
	paused       boolean     NOT NULL DEFAULT false,
	created      timestamptz NOT NULL,
	last_tick    timestamptz NOT NULL,             -- the latest tick fired or passed over
	next_tick    timestamptz NOT NULL              -- not due before: the workers' scan reads the schedules due only
);
CREATE INDEX ilmek_schedules_due ON ilmek_schedules (next_tick) WHERE NOT paused;
CREATE TABLE ilmek_schedule_firings (
	schedule   text        NOT NULL REFERENCES ilmek_schedules (name) ON DELETE CASCADE,
	tick       timestamptz NOT NULL,
	thread_id  text        NOT NULL,
	skipped    text        NOT NULL DEFAULT '',   -- why the tick did not run; '' when it did
	request_id bigint,                            -- the firing's ilmek_requests row
	fired_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (schedule, tick)
);
