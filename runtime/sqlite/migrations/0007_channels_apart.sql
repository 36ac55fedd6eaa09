-- Version 7: channels of more than 512 bytes live in ilmek_channels, a
-- rowid table, and the checkpoint row names them (big); smaller ones stay
-- in the row. The checkpoints table is clustered by (thread_id, seq): a
-- search in it compares keys with the rows it passes, and SQLite reads
-- the whole of a row that overflows its page to compare it, so every
-- lookup in a thread whose snapshots had grown (a long conversation)
-- read those snapshots from the file. A delta, usually a few hundred
-- bytes, stays in its row; a snapshot moves out and is read only when
-- its channels are. Deleting a checkpoint, or giving it other channels,
-- deletes the ones it named.
CREATE TABLE ilmek_channels (
	rid  INTEGER PRIMARY KEY,
	data BLOB    NOT NULL
);
ALTER TABLE ilmek_checkpoints ADD COLUMN big INTEGER;
CREATE TEMP TABLE ilmek_moved (
	rid       INTEGER PRIMARY KEY,
	thread_id TEXT    NOT NULL,
	seq       INTEGER NOT NULL,
	UNIQUE (thread_id, seq)
);
INSERT INTO ilmek_moved (thread_id, seq)
SELECT thread_id, seq FROM ilmek_checkpoints WHERE length(channels) > 512 ORDER BY thread_id, seq;
INSERT INTO ilmek_channels (rid, data)
SELECT m.rid, c.channels FROM ilmek_moved m JOIN ilmek_checkpoints c ON c.thread_id = m.thread_id AND c.seq = m.seq ORDER BY m.rid;
UPDATE ilmek_checkpoints SET channels = NULL,
	big = (SELECT m.rid FROM ilmek_moved m WHERE m.thread_id = ilmek_checkpoints.thread_id AND m.seq = ilmek_checkpoints.seq)
WHERE length(channels) > 512;
DROP TABLE ilmek_moved;
CREATE TRIGGER ilmek_channels_drop AFTER DELETE ON ilmek_checkpoints WHEN OLD.big IS NOT NULL BEGIN
	DELETE FROM ilmek_channels WHERE rid = OLD.big;
END;
CREATE TRIGGER ilmek_channels_replace AFTER UPDATE OF big ON ilmek_checkpoints WHEN OLD.big IS NOT NULL AND OLD.big IS NOT NEW.big BEGIN
	DELETE FROM ilmek_channels WHERE rid = OLD.big;
END;
