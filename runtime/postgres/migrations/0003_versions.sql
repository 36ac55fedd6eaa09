-- Version 3: each checkpoint names the graph version that wrote it (the
-- document's fingerprint and the checkpoint format, and the version a
-- migration moved the thread from), and the store keeps each version's
-- document by fingerprint, so a changed document is checked against the
-- one a paused thread was written by (runtime.DocumentStore). Rows written
-- before carry '' and 0: any version runs them unchecked.
ALTER TABLE ilmek_checkpoints
	ADD COLUMN fingerprint   text   NOT NULL DEFAULT '',
	ADD COLUMN format        bigint NOT NULL DEFAULT 0,
	ADD COLUMN migrated_from text   NOT NULL DEFAULT '';

CREATE TABLE ilmek_documents (
	fingerprint text  PRIMARY KEY,
	doc         bytea NOT NULL
);
