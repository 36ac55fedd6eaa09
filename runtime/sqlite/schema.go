package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// schema is version 1 of the tables. seq orders a thread's checkpoints by
// the time they were Put (AUTOINCREMENT never reuses a number, also across
// processes), which is what "latest" means.
const schema = `
CREATE TABLE IF NOT EXISTS ilmek_checkpoints (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	thread_id  TEXT    NOT NULL,
	id         TEXT    NOT NULL,
	parent_id  TEXT    NOT NULL DEFAULT '',
	plan_id    TEXT    NOT NULL DEFAULT '',
	step       INTEGER NOT NULL,
	created_ns INTEGER NOT NULL,
	channels   BLOB,
	next       BLOB,
	pending    BLOB,
	UNIQUE (thread_id, id)
);
CREATE INDEX IF NOT EXISTS ilmek_checkpoints_latest ON ilmek_checkpoints (thread_id, seq);
CREATE TABLE IF NOT EXISTS ilmek_journals (
	thread_id TEXT NOT NULL,
	task_id   TEXT NOT NULL,
	entries   BLOB,
	PRIMARY KEY (thread_id, task_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ilmek_leases (
	thread_id  TEXT    NOT NULL PRIMARY KEY,
	owner      TEXT    NOT NULL,
	holder     TEXT    NOT NULL,
	expires_ns INTEGER NOT NULL
) WITHOUT ROWID;
`

// migrate creates the schema in a new file and checks the version of an
// existing one, in one transaction so that processes opening a new file at
// the same time do not race. The version lives in ilmek_meta, not in PRAGMA
// user_version, so the file can also hold an application's own tables.
func (s *Store) migrate() error {
	ctx := context.Background()
	return s.tx(ctx, "", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS ilmek_meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID"); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		var v int
		err := tx.QueryRowContext(ctx, "SELECT CAST(value AS INTEGER) FROM ilmek_meta WHERE key = 'schema_version'").Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("read schema version: %w", err)
		case v == schemaVersion:
			return nil
		default:
			return fmt.Errorf("the file has ilmek schema version %d but this build knows version %d; open it with the ilmek version that wrote it", v, schemaVersion)
		}
		if _, err := tx.ExecContext(ctx, schema); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO ilmek_meta (key, value) VALUES ('schema_version', ?)", schemaVersion); err != nil {
			return fmt.Errorf("write schema version: %w", err)
		}
		return nil
	})
}
