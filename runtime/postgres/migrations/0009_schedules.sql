-- Version 9: reserved for the schedules (branch sched), which replace this
-- placeholder with their own 0009_schedules.sql; it exists so that
-- version 10 (flow control) follows without a gap until they are merged.
SELECT 1;
