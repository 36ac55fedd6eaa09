// Package sqlrepo is the studio's Repository over database/sql, shared by
// the SQLite and PostgreSQL implementations: they differ in placeholders
// and in their migrations, which each package embeds.
package sqlrepo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ilmek-go/ilmek/studio"
)

// Dialect says how one database spells what differs.
type Dialect struct {
	// Dollar numbers placeholders $1, $2... (PostgreSQL) instead of ?.
	Dollar bool
	// Lock, when set, is run first in the migration transaction to keep
	// two processes from migrating at once.
	Lock string
}

// Repo is a studio.Repository over a *sql.DB.
type Repo struct {
	db *sql.DB
	d  Dialect
}

// Migrate applies the numbered migrations of fsys ("0001_name.sql"...,
// in its root) that the database has not seen, each in a transaction,
// recording them in studio_migrations, and returns the repository.
func Migrate(ctx context.Context, db *sql.DB, d Dialect, fsys fs.FS) (*Repo, error) {
	r := &Repo{db: db, d: d}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS studio_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL)`); err != nil {
		return nil, fmt.Errorf("studio: creating studio_migrations: %w", err)
	}
	for _, name := range names {
		n, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("studio: migration %s: its name must start with a number and _", name)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		if err := r.tx(ctx, func(tx *sql.Tx) error {
			if d.Lock != "" {
				if _, err := tx.ExecContext(ctx, d.Lock); err != nil {
					return err
				}
			}
			var seen int
			if err := tx.QueryRowContext(ctx, r.q(`SELECT COUNT(*) FROM studio_migrations WHERE version = ?`), n).Scan(&seen); err != nil {
				return err
			}
			if seen > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, r.q(`INSERT INTO studio_migrations (version, name) VALUES (?, ?)`), n, name)
			return err
		}); err != nil {
			return nil, fmt.Errorf("studio: migration %s: %w", name, err)
		}
	}
	return r, nil
}

// q rewrites ? placeholders for the dialect.
func (r *Repo) q(s string) string {
	if !r.d.Dollar {
		return s
	}
	var b strings.Builder
	n := 0
	for _, c := range s {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (r *Repo) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func nanos(t time.Time) int64 { return t.UnixNano() }
func fromNanos(n int64) time.Time {
	return time.Unix(0, n).UTC()
}

const docCols = `id, name, owner, created, updated, revision, published`

type scanner interface{ Scan(...any) error }

func scanDoc(s scanner) (studio.Document, error) {
	var d studio.Document
	var c, u int64
	err := s.Scan(&d.ID, &d.Name, &d.Owner, &c, &u, &d.Revision, &d.Published)
	d.Created, d.Updated = fromNanos(c), fromNanos(u)
	return d, err
}

func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, studio.ErrNotFound)
	}
	return err
}

func (r *Repo) nameTaken(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, name, except string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, r.q(`SELECT COUNT(*) FROM studio_documents WHERE name = ? AND id <> ?`), name, except).Scan(&n)
	return n > 0, err
}

// Create implements studio.Repository.
func (r *Repo) Create(ctx context.Context, d studio.Document, first studio.Revision) (studio.Document, error) {
	if d.Created.IsZero() {
		d.Created = time.Now()
	}
	d.Created = d.Created.UTC().Round(0)
	d.Updated, d.Revision, d.Published = d.Created, 1, 0
	err := r.tx(ctx, func(tx *sql.Tx) error {
		if taken, err := r.nameTaken(ctx, tx, d.Name, d.ID); err != nil {
			return err
		} else if taken {
			return fmt.Errorf("document %q: %w", d.Name, studio.ErrNameTaken)
		}
		if _, err := tx.ExecContext(ctx, r.q(`INSERT INTO studio_documents (`+docCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`),
			d.ID, d.Name, d.Owner, nanos(d.Created), nanos(d.Updated), 1, 0); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, r.q(`INSERT INTO studio_revisions (document, number, author, created, fingerprint, body) VALUES (?, 1, ?, ?, ?, ?)`),
			d.ID, first.Author, nanos(d.Created), first.Fingerprint, first.Body)
		return err
	})
	if err != nil {
		if !errors.Is(err, studio.ErrNameTaken) {
			if taken, terr := r.nameTaken(ctx, r.db, d.Name, ""); terr == nil && taken {
				return studio.Document{}, fmt.Errorf("document %q: %w", d.Name, studio.ErrNameTaken)
			}
		}
		return studio.Document{}, err
	}
	return d, nil
}

// Get implements studio.Repository.
func (r *Repo) Get(ctx context.Context, id string) (studio.Document, error) {
	d, err := scanDoc(r.db.QueryRowContext(ctx, r.q(`SELECT `+docCols+` FROM studio_documents WHERE id = ?`), id))
	return d, notFound(err, fmt.Sprintf("document %q", id))
}

// List implements studio.Repository.
func (r *Repo) List(ctx context.Context) ([]studio.Document, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT `+docCols+` FROM studio_documents ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []studio.Document{}
	for rows.Next() {
		d, err := scanDoc(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// Rename implements studio.Repository.
func (r *Repo) Rename(ctx context.Context, id, name string) (studio.Document, error) {
	err := r.tx(ctx, func(tx *sql.Tx) error {
		if taken, err := r.nameTaken(ctx, tx, name, id); err != nil {
			return err
		} else if taken {
			return fmt.Errorf("document %q: %w", name, studio.ErrNameTaken)
		}
		res, err := tx.ExecContext(ctx, r.q(`UPDATE studio_documents SET name = ?, updated = ? WHERE id = ?`), name, nanos(time.Now()), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("document %q: %w", id, studio.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return studio.Document{}, err
	}
	return r.Get(ctx, id)
}

// Delete implements studio.Repository.
func (r *Repo) Delete(ctx context.Context, id string) error {
	return r.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, r.q(`DELETE FROM studio_documents WHERE id = ?`), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("document %q: %w", id, studio.ErrNotFound)
		}
		for _, t := range []string{"studio_revisions", "studio_versions"} {
			if _, err := tx.ExecContext(ctx, r.q(`DELETE FROM `+t+` WHERE document = ?`), id); err != nil {
				return err
			}
		}
		return nil
	})
}

// Save implements studio.Repository.
func (r *Repo) Save(ctx context.Context, base int, rev studio.Revision) (studio.Revision, error) {
	rev.Number, rev.Created = base+1, time.Now().UTC().Round(0)
	err := r.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, r.q(`UPDATE studio_documents SET revision = revision + 1, updated = ? WHERE id = ? AND revision = ?`),
			nanos(rev.Created), rev.Document, base)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			d, err := scanDoc(tx.QueryRowContext(ctx, r.q(`SELECT `+docCols+` FROM studio_documents WHERE id = ?`), rev.Document))
			if err != nil {
				return notFound(err, fmt.Sprintf("document %q", rev.Document))
			}
			return fmt.Errorf("document %q is at revision %d, not %d: %w", d.Name, d.Revision, base, studio.ErrStale)
		}
		_, err = tx.ExecContext(ctx, r.q(`INSERT INTO studio_revisions (document, number, author, created, fingerprint, body) VALUES (?, ?, ?, ?, ?, ?)`),
			rev.Document, rev.Number, rev.Author, nanos(rev.Created), rev.Fingerprint, rev.Body)
		return err
	})
	if err != nil {
		return studio.Revision{}, err
	}
	return rev, nil
}

// Revision implements studio.Repository.
func (r *Repo) Revision(ctx context.Context, id string, n int) (studio.Revision, error) {
	rev := studio.Revision{Document: id, Number: n}
	var c int64
	err := r.db.QueryRowContext(ctx, r.q(`SELECT author, created, fingerprint, body FROM studio_revisions WHERE document = ? AND number = ?`), id, n).
		Scan(&rev.Author, &c, &rev.Fingerprint, &rev.Body)
	rev.Created = fromNanos(c)
	return rev, notFound(err, fmt.Sprintf("document %q revision %d", id, n))
}

// Revisions implements studio.Repository.
func (r *Repo) Revisions(ctx context.Context, id string) ([]studio.Revision, error) {
	if _, err := r.Get(ctx, id); err != nil {
		return nil, err
	}
	rows, err := r.db.QueryContext(ctx, r.q(`SELECT number, author, created, fingerprint FROM studio_revisions WHERE document = ? ORDER BY number`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []studio.Revision
	for rows.Next() {
		rev := studio.Revision{Document: id}
		var c int64
		if err := rows.Scan(&rev.Number, &rev.Author, &c, &rev.Fingerprint); err != nil {
			return nil, err
		}
		rev.Created = fromNanos(c)
		out = append(out, rev)
	}
	return out, rows.Err()
}

// Publish implements studio.Repository.
func (r *Repo) Publish(ctx context.Context, prev int, v studio.Version) (studio.Version, error) {
	v.Number, v.Created = prev+1, time.Now().UTC().Round(0)
	err := r.tx(ctx, func(tx *sql.Tx) error {
		var revs int
		if err := tx.QueryRowContext(ctx, r.q(`SELECT COUNT(*) FROM studio_revisions WHERE document = ? AND number = ?`), v.Document, v.Revision).Scan(&revs); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, r.q(`UPDATE studio_documents SET published = published + 1 WHERE id = ? AND published = ?`), v.Document, prev)
		if err != nil {
			return err
		}
		d, err := scanDoc(tx.QueryRowContext(ctx, r.q(`SELECT `+docCols+` FROM studio_documents WHERE id = ?`), v.Document))
		if err != nil {
			return notFound(err, fmt.Sprintf("document %q", v.Document))
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("document %q is at version %d, not %d: %w", d.Name, d.Published, prev, studio.ErrStale)
		}
		if revs == 0 {
			return fmt.Errorf("document %q revision %d: %w", d.Name, v.Revision, studio.ErrNotFound)
		}
		v.Name = d.Name
		_, err = tx.ExecContext(ctx, r.q(`INSERT INTO studio_versions (document, number, revision, fingerprint, publisher, created, body) VALUES (?, ?, ?, ?, ?, ?, ?)`),
			v.Document, v.Number, v.Revision, v.Fingerprint, v.Publisher, nanos(v.Created), v.Body)
		return err
	})
	if err != nil {
		return studio.Version{}, err
	}
	return v, nil
}

// Published implements studio.Repository.
func (r *Repo) Published(ctx context.Context, name string) (studio.Version, error) {
	v := studio.Version{Name: name}
	var c int64
	err := r.db.QueryRowContext(ctx, r.q(`SELECT v.document, v.number, v.revision, v.fingerprint, v.publisher, v.created, v.body
		FROM studio_versions v JOIN studio_documents d ON d.id = v.document AND d.published = v.number WHERE d.name = ?`), name).
		Scan(&v.Document, &v.Number, &v.Revision, &v.Fingerprint, &v.Publisher, &c, &v.Body)
	v.Created = fromNanos(c)
	return v, notFound(err, fmt.Sprintf("published version of %q", name))
}

// Versions implements studio.Repository.
func (r *Repo) Versions(ctx context.Context, id string) ([]studio.Version, error) {
	d, err := r.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	rows, err := r.db.QueryContext(ctx, r.q(`SELECT number, revision, fingerprint, publisher, created FROM studio_versions WHERE document = ? ORDER BY number`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []studio.Version
	for rows.Next() {
		v := studio.Version{Document: id, Name: d.Name}
		var c int64
		if err := rows.Scan(&v.Number, &v.Revision, &v.Fingerprint, &v.Publisher, &c); err != nil {
			return nil, err
		}
		v.Created = fromNanos(c)
		out = append(out, v)
	}
	return out, rows.Err()
}
