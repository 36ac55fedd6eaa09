package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// schema is the current version of the tables (schemaVersion): version 1,
// plus what each migration step below adds, for a new file. seq orders a thread's checkpoints by
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
	fingerprint TEXT   NOT NULL DEFAULT '',
	format     INTEGER NOT NULL DEFAULT 0,
	migrated_from TEXT NOT NULL DEFAULT '',
	base_id    TEXT    NOT NULL DEFAULT '',
	snap_id    TEXT    NOT NULL DEFAULT '',
	depth      INTEGER NOT NULL DEFAULT 0,
	chain_bytes INTEGER NOT NULL DEFAULT 0,
	UNIQUE (thread_id, id)
);
CREATE INDEX IF NOT EXISTS ilmek_checkpoints_latest ON ilmek_checkpoints (thread_id, seq);
CREATE INDEX IF NOT EXISTS ilmek_checkpoints_chain ON ilmek_checkpoints (thread_id, snap_id);
CREATE TABLE IF NOT EXISTS ilmek_journals (
	thread_id TEXT NOT NULL,
	task_id   TEXT NOT NULL,
	entries   BLOB,
	PRIMARY KEY (thread_id, task_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ilmek_documents (
	fingerprint TEXT NOT NULL PRIMARY KEY,
	doc         BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ilmek_leases (
	thread_id  TEXT    NOT NULL PRIMARY KEY,
	owner      TEXT    NOT NULL,
	holder     TEXT    NOT NULL,
	expires_ns INTEGER NOT NULL
) WITHOUT ROWID;
` + threadsSchema

// threadsSchema is the part of version 3 that finds threads and keeps
// runs' events: ilmek_threads, one row per thread with its metadata (a
// JSON object of strings, as text), the outcome of its last run and the
// interrupts it paused on (JSON), and when it was last written, kept by a
// trigger on every checkpoint insert; and ilmek_events, the bounded event
// log of each run (runtime.EventStore).
const threadsSchema = `
CREATE TABLE IF NOT EXISTS ilmek_threads (
	thread_id  TEXT    NOT NULL PRIMARY KEY,
	meta       TEXT,
	status     TEXT    NOT NULL DEFAULT '',
	run_id     TEXT    NOT NULL DEFAULT '',
	ended_ns   INTEGER NOT NULL DEFAULT 0,
	error      TEXT    NOT NULL DEFAULT '',
	pending    BLOB,
	updated_ns INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ilmek_threads_updated ON ilmek_threads (updated_ns, thread_id);
CREATE TRIGGER IF NOT EXISTS ilmek_threads_touch AFTER INSERT ON ilmek_checkpoints BEGIN
	INSERT INTO ilmek_threads (thread_id, updated_ns) VALUES (NEW.thread_id, NEW.created_ns)
	ON CONFLICT (thread_id) DO UPDATE SET updated_ns = max(updated_ns, excluded.updated_ns);
END;
CREATE TABLE IF NOT EXISTS ilmek_events (
	run_id    TEXT    NOT NULL,
	seq       INTEGER NOT NULL,
	thread_id TEXT    NOT NULL,
	time_ns   INTEGER NOT NULL,
	kind      TEXT    NOT NULL,
	data      BLOB    NOT NULL,
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ilmek_events_thread ON ilmek_events (thread_id, time_ns);
`

// addThreads adds what threadsSchema holds to a file of an earlier
// schema, and gives every thread already stored its row: its latest
// checkpoint's time as its update time, and, read from that checkpoint,
// the outcome "interrupted" with its interrupts when it has pending ones,
// "done" when nothing is planned, none otherwise (a run that failed or
// is still going left planned tasks). Metadata starts empty.
func addThreads(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, threadsSchema); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `
INSERT INTO ilmek_threads (thread_id, status, pending, updated_ns)
SELECT c.thread_id,
	CASE WHEN coalesce(CAST(c.pending AS TEXT), 'null') NOT IN ('null', '[]') THEN 'interrupted'
	     WHEN coalesce(CAST(c.next AS TEXT), 'null') IN ('null', '[]') THEN 'done'
	     ELSE '' END,
	CASE WHEN coalesce(CAST(c.pending AS TEXT), 'null') NOT IN ('null', '[]') THEN c.pending END,
	m.updated
FROM ilmek_checkpoints c
JOIN (SELECT thread_id, max(seq) AS seq, max(created_ns) AS updated FROM ilmek_checkpoints GROUP BY thread_id) m ON c.seq = m.seq
WHERE true
ON CONFLICT (thread_id) DO NOTHING`)
	return err
}

// ErrSchema is matched (errors.Is) by the error of Open when the file's
// ilmek tables cannot be used by this build: ilmek tables without a valid
// version row (a dropped ilmek_meta, a garbled or missing version), or a
// version this build does not know. The file is left as it was. A file
// with ilmek tables but no ilmek_meta was not written by a complete store,
// or the table was dropped: restore ilmek_meta (key 'schema_version') from
// a backup.
var ErrSchema = errors.New("the file's ilmek schema cannot be used by this build")

// schemaError is an ErrSchema with what was found and the fix.
type schemaError struct{ msg string }

func (e *schemaError) Error() string        { return e.msg }
func (e *schemaError) Is(target error) bool { return target == ErrSchema }

// migrate creates the schema in a new file and checks the version of an
// existing one, in one transaction so that processes opening a new file at
// the same time do not race, and so that a refused file is left untouched.
// The version lives in the table ilmek_meta (key 'schema_version'), not in
// PRAGMA user_version, so the file can also hold an application's own
// tables. A file with ilmek tables but no valid version row, or with a
// version this build does not know, is refused with ErrSchema.
func (s *Store) migrate() error {
	ctx := context.Background()
	return s.tx(ctx, nil, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'ilmek\_%' ESCAPE '\' ORDER BY name`)
		if err != nil {
			return fmt.Errorf("read schema: %w", err)
		}
		var tables []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				rows.Close()
				return fmt.Errorf("read schema: %w", err)
			}
			tables = append(tables, name)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read schema: %w", err)
		}
		if len(tables) == 0 {
			return s.create(ctx, tx)
		}
		if !slices.Contains(tables, "ilmek_meta") {
			return &schemaError{fmt.Sprintf("the file has ilmek tables (%s) but no ilmek_meta table with their schema version; restore ilmek_meta from a backup or use another file", strings.Join(tables, ", "))}
		}
		var raw string
		err = tx.QueryRowContext(ctx, "SELECT CAST(value AS TEXT) FROM ilmek_meta WHERE key = 'schema_version'").Scan(&raw)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return &schemaError{"the file's ilmek_meta table has no schema_version row; restore it from a backup, or use another file"}
		case err != nil:
			return fmt.Errorf("read schema version: %w", err)
		}
		v, perr := strconv.Atoi(raw)
		switch {
		case perr != nil || v < 1:
			return &schemaError{fmt.Sprintf("the file's ilmek schema version %q is not a version number; restore ilmek_meta from a backup, or use another file", raw)}
		case v > schemaVersion:
			return &schemaError{fmt.Sprintf("the file has ilmek schema version %d but this build knows version %d; open it with the ilmek version that wrote it, or a newer one", v, schemaVersion)}
		}
		if v == schemaVersion && !slices.Contains(tables, "ilmek_threads") {
			// A version 3 file written before version 3 held the thread
			// records and the event log (a pre-release build).
			if err := addThreads(ctx, tx); err != nil {
				return fmt.Errorf("add the thread records to schema version %d: %w", v, err)
			}
		}
		for ; v < schemaVersion; v++ {
			step := migrations[v]
			if step.apply == nil {
				return &schemaError{fmt.Sprintf("the file has ilmek schema version %d, which this build (version %d) cannot migrate", v, schemaVersion)}
			}
			if err := step.apply(ctx, tx); err != nil {
				return fmt.Errorf("migrate schema from version %d to %d (%s): %w", v, v+1, step.name, err)
			}
			if _, err := tx.ExecContext(ctx, "UPDATE ilmek_meta SET value = ? WHERE key = 'schema_version'", strconv.Itoa(v+1)); err != nil {
				return fmt.Errorf("write schema version %d: %w", v+1, err)
			}
		}
		return nil
	})
}

// create writes the schema and its version into a file without ilmek tables.
func (s *Store) create(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, "CREATE TABLE ilmek_meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID"); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO ilmek_meta (key, value) VALUES ('schema_version', ?)", strconv.Itoa(schemaVersion)); err != nil {
		return fmt.Errorf("write schema version: %w", err)
	}
	return nil
}

// migration is one in-place step from a schema version to the next. Steps
// run in migrate's transaction: a file is migrated entirely or not at all.
type migration struct {
	name  string
	apply func(ctx context.Context, tx *sql.Tx) error
}

// migrations holds the step from each version to the next, by the version
// it starts from.
var migrations = map[int]migration{
	1: {"document versions", migrateDocumentVersions},
	2: {"incremental checkpoints", migrateIncremental},
}

// migrateIncremental (version 2 to 3) adds the thread records and event
// log (addThreads) and lets a checkpoint be stored as the
// delta of another (runtime.DeltaCheckpointer): base_id names the
// checkpoint the row's channels column changes (its channels then hold the
// JSON array of runtime.ChannelWrite), snap_id the full snapshot its chain
// of deltas starts at, depth and chain_bytes the chain's length and delta
// bytes up to the row (what compaction is decided on). The checkpoints
// already stored are full snapshots: every new column's default.
func migrateIncremental(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{
		"ALTER TABLE ilmek_checkpoints ADD COLUMN base_id TEXT NOT NULL DEFAULT ''",
		"ALTER TABLE ilmek_checkpoints ADD COLUMN snap_id TEXT NOT NULL DEFAULT ''",
		"ALTER TABLE ilmek_checkpoints ADD COLUMN depth INTEGER NOT NULL DEFAULT 0",
		"ALTER TABLE ilmek_checkpoints ADD COLUMN chain_bytes INTEGER NOT NULL DEFAULT 0",
		"CREATE INDEX ilmek_checkpoints_chain ON ilmek_checkpoints (thread_id, snap_id)",
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return addThreads(ctx, tx)
}

// migrateDocumentVersions (version 1 to 2) gives every checkpoint the
// fingerprint of the graph version that wrote it, the checkpoint format and
// the version a migration moved it from (all empty for the checkpoints already stored: any version runs them
// unchecked), and adds ilmek_documents, the documents by fingerprint.
func migrateDocumentVersions(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{
		"ALTER TABLE ilmek_checkpoints ADD COLUMN fingerprint TEXT NOT NULL DEFAULT ''",
		"ALTER TABLE ilmek_checkpoints ADD COLUMN format INTEGER NOT NULL DEFAULT 0",
		"ALTER TABLE ilmek_checkpoints ADD COLUMN migrated_from TEXT NOT NULL DEFAULT ''",
		"CREATE TABLE ilmek_documents (fingerprint TEXT NOT NULL PRIMARY KEY, doc BLOB NOT NULL) WITHOUT ROWID",
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
