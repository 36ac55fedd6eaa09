package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// migrationFiles are the schema's versions, one file each, named
// NNNN_what.sql; they run in order of NNNN.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one version of the schema.
type migration = store.Migration

// migrations returns the embedded migrations in version order.
func migrations() ([]migration, error) { return store.Migrations(migrationFiles, "migrations/*.sql") }

// SchemaVersion is the schema version this build of the package writes and
// reads (the highest version in the schema's ilmek_migrations table).
var SchemaVersion = func() int {
	ms, err := migrations()
	if err != nil {
		panic("runtime/postgres: " + err.Error())
	}
	return len(ms)
}()

// ErrSchemaTooNew is returned by Open when the schema was migrated by a newer
// build of this package than the running one. Nothing was changed; run a
// build at least as new as the one that migrated it.
var ErrSchemaTooNew = errors.New("the ilmek schema is newer than this build knows")

// schemaName is what Schema accepts: a lower-case SQL identifier, so the
// name needs no quoting rules beyond double quotes and reads the same in
// psql.
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// migrate creates the schema and its tables, or brings them up to
// SchemaVersion, in one transaction that holds a transaction-level advisory
// lock derived from the schema's name: two processes starting at once on an
// empty schema serialize, the second finds the work done. It refuses (with
// ErrSchemaTooNew) a schema newer than this build.
func migrate(ctx context.Context, conn interface {
	Begin(context.Context) (pgx.Tx, error)
}, schema string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin the migration transaction: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "ilmek-migrate:"+schema); err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	q := quote(schema)
	if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+q); err != nil {
		return fmt.Errorf("create schema %s: %w", q, err)
	}
	if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+q+".ilmek_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"); err != nil {
		return fmt.Errorf("create %s.ilmek_migrations: %w", q, err)
	}
	var have int
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+q+".ilmek_migrations").Scan(&have); err != nil {
		return fmt.Errorf("read the schema version of %s: %w", q, err)
	}
	if have > len(ms) {
		return fmt.Errorf("%w: schema %s is at version %d, this build knows up to %d; run the build that migrated it, or a newer one", ErrSchemaTooNew, q, have, len(ms))
	}
	if have == len(ms) {
		return tx.Commit(ctx) // nothing to do; ends the transaction and the lock
	}
	if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+q); err != nil {
		return fmt.Errorf("set search_path to %s: %w", q, err)
	}
	for _, m := range ms[have:] {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("migration %s on schema %s: %w", m.Name, q, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+q+".ilmek_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
			return fmt.Errorf("record migration %s on schema %s: %w", m.Name, q, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit the migration of schema %s: %w", q, err)
	}
	return nil
}

// quote returns schema as a quoted SQL identifier; schema matches
// schemaName, so it holds no quote to escape.
func quote(schema string) string { return `"` + schema + `"` }
