// Package postgres is the studio's Repository in PostgreSQL (through
// pgx's database/sql driver), with its migrations embedded as numbered
// .sql files.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"io/fs"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/ilmek-go/ilmek/studio"
	"github.com/ilmek-go/ilmek/studio/internal/sqlrepo"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock keeps two processes from migrating at once (a
// transaction-level advisory lock, released at commit).
const migrationLock = "SELECT pg_advisory_xact_lock(7364923)"

// Open connects to the PostgreSQL server of dsn, applies the studio's
// migrations and returns its Repository with the database, which the
// caller closes.
func Open(ctx context.Context, dsn string) (studio.Repository, *sql.DB, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, nil, err
	}
	r, err := New(ctx, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return r, db, nil
}

// New applies the studio's migrations to db, a PostgreSQL database
// opened with the "pgx" driver, and returns its Repository.
func New(ctx context.Context, db *sql.DB) (studio.Repository, error) {
	sub, _ := fs.Sub(migrations, "migrations")
	return sqlrepo.Migrate(ctx, db, sqlrepo.Dialect{Dollar: true, Lock: migrationLock}, sub)
}
