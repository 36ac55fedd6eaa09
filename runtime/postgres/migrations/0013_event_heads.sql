-- Version 13: a row of ilmek_events that holds several events frames them
-- in the second layout (runtime/internal/store, event_rows.go, format byte
-- 2): an event's data leaves out its head (its type, run id, thread id and
-- Seq, which the row and the frame hold already), about 80 of an event's
-- 200 bytes, and a read puts it back byte for byte. Rows of the first
-- layout read as before. The tables do not change; the version does, so
-- that a build that cannot read the new rows refuses the schema.
SELECT 1;
