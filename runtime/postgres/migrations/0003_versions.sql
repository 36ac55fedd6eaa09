-- Version 3: checkpoints name their graph version and may be deltas.
--
-- Each checkpoint names the graph version that wrote it (the document's
-- fingerprint, the checkpoint format, and the version a migration moved
-- the thread from), and the store keeps each version's document by
-- fingerprint, so a changed document is checked against the one a paused
-- thread was written by (runtime.DocumentStore). Rows written before carry
-- '' and 0: any version runs them unchecked.
--
-- A checkpoint stored by PutDelta keeps in channels only its writes
-- (runtime.ChannelWrite list) and names its base checkpoint (base_id) and
-- the full snapshot its chain starts at (snap_id); depth and chain_bytes
-- count the chain's deltas and their bytes, for compaction. A full
-- snapshot has base_id = '' (every row written before).
ALTER TABLE ilmek_checkpoints
	ADD COLUMN fingerprint   text    NOT NULL DEFAULT '',
	ADD COLUMN format        bigint  NOT NULL DEFAULT 0,
	ADD COLUMN migrated_from text    NOT NULL DEFAULT '',
	ADD COLUMN base_id       text    NOT NULL DEFAULT '',
	ADD COLUMN snap_id       text    NOT NULL DEFAULT '',
	ADD COLUMN depth         integer NOT NULL DEFAULT 0,
	ADD COLUMN chain_bytes   bigint  NOT NULL DEFAULT 0;
CREATE INDEX ilmek_checkpoints_chain ON ilmek_checkpoints (thread_id, snap_id) WHERE snap_id <> '';

CREATE TABLE ilmek_documents (
	fingerprint text  PRIMARY KEY,
	doc         bytea NOT NULL
);
