-- Version 8: a row of ilmek_events holds the consecutive events of one
-- run that one write stored, not one event: a write inserts a row where
-- it inserted one per event (about five a superstep). seq is the row's
-- last event's Seq (so a reader after Seq n reads the rows whose key
-- passes n), first_seq its first's; time_ns and kind are the last
-- event's. A row of one event is stored as before, its data the event's
-- own; a row of more holds them framed (runtime/internal/store,
-- event_rows.go), about a quarter of a page at most. Rows stored before
-- this version have no first_seq: one event each, read as they were.
ALTER TABLE ilmek_events ADD COLUMN first_seq INTEGER;
