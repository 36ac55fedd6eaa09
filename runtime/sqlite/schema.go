package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// The schema is the embedded numbered migrations, as PostgreSQL's are:
// migrations/NNNN_name.sql takes a file from version NNNN-1 to NNNN (0001
// creates it). A new file runs them all; an older one the ones past its
// version, in Open's transaction.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered step of the schema.
type migration = store.Migration

// migrations returns the embedded migrations by version, from 1 up to
// schemaVersion without gaps.
func migrations() ([]migration, error) {
	ms, err := store.Migrations(migrationFiles, "migrations/*.sql")
	if err == nil && len(ms) != schemaVersion {
		err = fmt.Errorf("%d migration files for schema version %d", len(ms), schemaVersion)
	}
	return ms, err
}

// threadsMarker starts the part of migration 3 that a pre-release version
// 3 file lacks (the thread records and the event log).
const threadsMarker = "-- threads --"

// addThreads adds the thread records and event log to a pre-release
// version 3 file (see migration 0003).
func addThreads(ctx context.Context, tx *sql.Tx) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	_, part, ok := strings.Cut(ms[2].SQL, threadsMarker)
	if !ok {
		return fmt.Errorf("migration 0003 has no %q part", threadsMarker)
	}
	_, err = tx.ExecContext(ctx, part)
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
		if v == 3 && !slices.Contains(tables, "ilmek_threads") {
			// A version 3 file written before version 3 held the thread
			// records and the event log (a pre-release build).
			if err := addThreads(ctx, tx); err != nil {
				return fmt.Errorf("add the thread records to schema version %d: %w", v, err)
			}
		}
		ms, err := migrations()
		if err != nil {
			return err
		}
		for ; v < schemaVersion; v++ {
			step := ms[v]
			if _, err := tx.ExecContext(ctx, step.SQL); err != nil {
				return fmt.Errorf("migrate schema from version %d to %d (%s): %w", v, v+1, step.Name, err)
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
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	for _, m := range ms {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("create schema: migration %s: %w", m.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO ilmek_meta (key, value) VALUES ('schema_version', ?)", strconv.Itoa(schemaVersion)); err != nil {
		return fmt.Errorf("write schema version: %w", err)
	}
	return nil
}
