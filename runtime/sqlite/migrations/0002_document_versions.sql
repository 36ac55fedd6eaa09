-- Version 2: every checkpoint records the fingerprint of the graph version
-- that wrote it, the checkpoint format and the version a migration moved it
-- from (all empty for the checkpoints already stored: any version runs them
-- unchecked); ilmek_documents keeps the documents by fingerprint.
ALTER TABLE ilmek_checkpoints ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';
ALTER TABLE ilmek_checkpoints ADD COLUMN format INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ilmek_checkpoints ADD COLUMN migrated_from TEXT NOT NULL DEFAULT '';
CREATE TABLE ilmek_documents (fingerprint TEXT NOT NULL PRIMARY KEY, doc BLOB NOT NULL) WITHOUT ROWID;
