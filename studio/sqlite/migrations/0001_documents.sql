-- The studio's documents, their draft revisions and published versions.
-- Times are Unix nanoseconds (UTC).
CREATE TABLE studio_documents (
	id        TEXT PRIMARY KEY,
	name      TEXT NOT NULL UNIQUE,
	owner     TEXT NOT NULL,
	created   BIGINT NOT NULL,
	updated   BIGINT NOT NULL,
	revision  BIGINT NOT NULL,
	published BIGINT NOT NULL
);
CREATE TABLE studio_revisions (
	document    TEXT NOT NULL,
	number      BIGINT NOT NULL,
	author      TEXT NOT NULL,
	created     BIGINT NOT NULL,
	fingerprint TEXT NOT NULL,
	body        BLOB NOT NULL,
	PRIMARY KEY (document, number)
);
CREATE TABLE studio_versions (
	document    TEXT NOT NULL,
	number      BIGINT NOT NULL,
	revision    BIGINT NOT NULL,
	fingerprint TEXT NOT NULL,
	publisher   TEXT NOT NULL,
	created     BIGINT NOT NULL,
	body        BLOB NOT NULL,
	PRIMARY KEY (document, number)
);
