package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// Backend is a named checkpointer factory. New is called once per case;
// a checkpointer that is an io.Closer is closed when its case is done.
// Close, when set, releases what the backend holds (its files) once every
// case has run.
type Backend struct {
	Name  string
	New   func() runtime.Checkpointer
	Close func() error
}

// BackendNames are the checkpointer backends OpenBackend knows: memory,
// sqlite, and postgres when EnvPostgresDSN names a server.
var BackendNames = backendNames()

// EnvPostgresDSN names the PostgreSQL server of the "postgres" backend
// (a postgres:// URL); without it the backend is not among BackendNames.
const EnvPostgresDSN = "ILMEK_POSTGRES_DSN"

func backendNames() []string {
	names := []string{"memory", "sqlite"}
	if os.Getenv(EnvPostgresDSN) != "" {
		names = append(names, "postgres")
	}
	return names
}

// OpenBackend returns the backend called name: "memory" (a new
// checkpoint.NewMemory per case) or "sqlite" (runtime/sqlite files in a
// temporary directory that Close removes). Each sqlite checkpointer New
// returns is a database file of its own while its case runs; closing it
// deletes the case's thread (runtime.Checkpointer.DeleteThread) and gives
// the file to the next case, since creating a database costs far more
// than a case.
func OpenBackend(name string) (Backend, error) {
	switch name {
	case "memory":
		return Backend{Name: name, New: func() runtime.Checkpointer { return checkpoint.NewMemory() }, Close: func() error { return nil }}, nil
	case "sqlite":
		dir, err := os.MkdirTemp("", "ilmek-conformance-sqlite-")
		if err != nil {
			return Backend{}, fmt.Errorf("backend sqlite: make a directory for the database files: %w", err)
		}
		p := &storePool{name: name, open: func(n int) (pooled, error) {
			return sqlite.Open(filepath.Join(dir, fmt.Sprintf("cases-%d.db", n)))
		}, cleanup: func() error { return os.RemoveAll(dir) }}
		return Backend{Name: name, New: p.get, Close: p.close}, nil
	case "postgres":
		return openPostgres()
	}
	return Backend{}, fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(BackendNames, ", "))
}

// knownBackend reports whether name is one of BackendNames.
func knownBackend(name string) bool { return slices.Contains(BackendNames, name) }

// pooled is a store a storePool lends: a checkpointer that can be closed.
type pooled interface {
	runtime.Checkpointer
	Close() error
}

// storePool hands out stores, one case at a time each.
type storePool struct {
	name    string
	open    func(n int) (pooled, error) // opens the n-th store (1, 2, ...)
	cleanup func() error                // after every store is closed
	mu      sync.Mutex
	n       int
	free    []pooled
	all     []pooled
}

// get returns a free store, opening a new one when none is free.
func (p *storePool) get() runtime.Checkpointer {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		return &pooledStore{pooled: s, pool: p}
	}
	p.n++
	s, err := p.open(p.n)
	if err != nil {
		return brokenCheckpointer{fmt.Errorf("backend %s: open store %d: %w", p.name, p.n, err)}
	}
	p.all = append(p.all, s)
	return &pooledStore{pooled: s, pool: p}
}

// close closes every store and cleans up.
func (p *storePool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, s := range p.all {
		errs = append(errs, s.Close())
	}
	p.all, p.free = nil, nil
	errs = append(errs, p.cleanup())
	return errors.Join(errs...)
}

// pooledStore is a store lent to one case.
type pooledStore struct {
	pooled
	pool *storePool
}

// Close deletes the case's thread and returns the store to the pool; a
// store whose thread cannot be deleted is not reused.
func (s *pooledStore) Close() error {
	if err := s.DeleteThread(context.Background(), Thread); err != nil {
		return fmt.Errorf("backend %s: delete thread %q after its case: %w", s.pool.name, Thread, err)
	}
	s.pool.mu.Lock()
	defer s.pool.mu.Unlock()
	s.pool.free = append(s.pool.free, s.pooled)
	return nil
}

// openPostgres opens the "postgres" backend: stores on the server named by
// EnvPostgresDSN, each in a schema of its own (a case's thread id is the
// same in every case) on one shared connection pool; Close drops the
// schemas. Like the sqlite backend's files, a schema serves one case at a
// time and is reused after its thread is deleted.
func openPostgres() (Backend, error) {
	dsn := os.Getenv(EnvPostgresDSN)
	if dsn == "" {
		return Backend{}, fmt.Errorf("backend postgres: %s is not set; set it to the server's URL, e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable", EnvPostgresDSN)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, dsn)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		return Backend{}, fmt.Errorf("backend postgres: connect to %s: %w", EnvPostgresDSN, err)
	}
	prefix := fmt.Sprintf("ilmek_conformance_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	var schemas []string
	p := &storePool{name: "postgres", open: func(n int) (pooled, error) {
		schema := fmt.Sprintf("%s_%d", prefix, n)
		schemas = append(schemas, schema) // under the pool's lock
		return postgres.OpenPool(context.Background(), pool, postgres.Schema(schema))
	}, cleanup: func() error {
		defer pool.Close()
		for _, s := range schemas {
			if _, err := pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+s+" CASCADE"); err != nil {
				return fmt.Errorf("backend postgres: drop schema %s: %w", s, err)
			}
		}
		return nil
	}}
	return Backend{Name: "postgres", New: p.get, Close: p.close}, nil
}
