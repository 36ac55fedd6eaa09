// Package sqlite is the studio's Repository in a SQLite database (the
// modernc.org/sqlite driver, pure Go), with its migrations embedded as
// numbered .sql files.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"io/fs"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/ilmek-go/ilmek/studio"
	"github.com/ilmek-go/ilmek/studio/internal/sqlrepo"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Open opens (creating it when missing) the SQLite database at path,
// applies the studio's migrations and returns its Repository with the
// database, which the caller closes.
func Open(ctx context.Context, path string) (studio.Repository, *sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate")
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

// New applies the studio's migrations to db, a SQLite database, and
// returns its Repository.
func New(ctx context.Context, db *sql.DB) (studio.Repository, error) {
	sub, _ := fs.Sub(migrations, "migrations")
	return sqlrepo.Migrate(ctx, db, sqlrepo.Dialect{}, sub)
}
