-- Version 5: stored schedules (checkpoint.ScheduleStore) and their
-- firings. The in-process waker (runtime/waker) records a due tick's
-- firing and moves last_ns in one transaction, only while last_ns is
-- still the value it read; the primary key (schedule, tick_ns) keeps a
-- tick to one firing. Deleting a schedule deletes its firings in the
-- same transaction. Times are Unix nanoseconds.
CREATE TABLE ilmek_schedules (
	name         TEXT    PRIMARY KEY,
	graph        TEXT    NOT NULL,
	cron         TEXT    NOT NULL DEFAULT '',
	time_zone    TEXT    NOT NULL DEFAULT '',
	every_ns     INTEGER NOT NULL DEFAULT 0,
	input        BLOB,
	meta         TEXT    NOT NULL DEFAULT '{}',
	thread       TEXT    NOT NULL,
	overlap      TEXT    NOT NULL,
	catch_up     TEXT    NOT NULL,
	max_catch_up INTEGER NOT NULL,
	paused       INTEGER NOT NULL DEFAULT 0,
	created_ns   INTEGER NOT NULL,
	last_ns      INTEGER NOT NULL
);
CREATE TABLE ilmek_schedule_firings (
	schedule   TEXT    NOT NULL,
	tick_ns    INTEGER NOT NULL,
	thread_id  TEXT    NOT NULL,
	skipped    TEXT    NOT NULL DEFAULT '',
	request_id INTEGER NOT NULL DEFAULT 0,
	fired_ns   INTEGER NOT NULL,
	PRIMARY KEY (schedule, tick_ns)
);
