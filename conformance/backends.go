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
	// Skip, when set, returns why the backend does not run a case ("" when
	// it does): RunSuite reports the case as skipped with that reason.
	Skip func(*Case) string
}

// memorySkip is the memory backend's Skip: a killed run (Run.Kill) is made
// by another process, which cannot reach this process's memory.
func memorySkip(c *Case) string {
	if c.hasKill() {
		return "a killed run is made by a process of its own, and the memory store lives in this one"
	}
	return ""
}

// SkipReason returns why backend b does not run c ("" when it does).
func (b Backend) SkipReason(c *Case) string {
	if b.Skip == nil {
		return ""
	}
	return b.Skip(c)
}

// BackendNames are the checkpointer backends OpenBackend knows: memory,
// sqlite, sqlite-nextwrite, and postgres and workers when EnvPostgresDSN
// names a server.
var BackendNames = backendNames()

// EnvPostgresDSN names the PostgreSQL server of the "postgres" backend
// (a postgres:// URL); without it the backend is not among BackendNames.
const EnvPostgresDSN = "ILMEK_POSTGRES_DSN"

func backendNames() []string {
	names := []string{"memory", "sqlite", "sqlite-nextwrite"}
	if os.Getenv(EnvPostgresDSN) != "" {
		names = append(names, "postgres", "workers")
	}
	return names
}

// OpenBackend returns the backend called name: "memory" (a new
// checkpoint.NewMemory per case) or "sqlite" (runtime/sqlite files in a
// temporary directory that Close removes); "sqlite-nextwrite" is sqlite
// with every run keeping its checkpoints for its next write
// (runtime.DurableWithNextWrite), which must observe exactly the same. Each sqlite checkpointer New
// returns is a database file of its own while its case runs; closing it
// deletes the case's thread (runtime.Checkpointer.DeleteThread) and gives
// the file to the next case, since creating a database costs far more
// than a case.
func OpenBackend(name string) (Backend, error) {
	switch name {
	case "memory":
		return Backend{Name: name, New: func() runtime.Checkpointer { return checkpoint.NewMemory() }, Close: func() error { return nil }, Skip: memorySkip}, nil
	case "sqlite", "sqlite-nextwrite":
		dir, err := os.MkdirTemp("", "ilmek-conformance-sqlite-")
		if err != nil {
			return Backend{}, fmt.Errorf("backend %s: make a directory for the database files: %w", name, err)
		}
		path := func(n int) string { return filepath.Join(dir, fmt.Sprintf("cases-%d.db", n)) }
		p := &storePool{name: name, open: func(n int) (pooled, error) {
			return sqlite.Open(path(n))
		}, locate: path, cleanup: func() error { return os.RemoveAll(dir) }}
		if name == "sqlite-nextwrite" {
			p.opts = nextWrite
		}
		return Backend{Name: name, New: p.get, Close: p.close}, nil
	case "postgres":
		return openPostgres(name)
	case "workers":
		return openWorkers()
	}
	return Backend{}, fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(BackendNames, ", "))
}

// nextWrite are the run options of the sqlite-nextwrite backend.
var nextWrite = []runtime.RunOption{runtime.WithDurability(runtime.DurableWithNextWrite)}

// knownBackend reports whether name is one of BackendNames.
func knownBackend(name string) bool { return slices.Contains(BackendNames, name) }

// pooled is a store a storePool lends: a checkpointer that can be closed,
// with every optional interface the runtime looks for on a checkpointer
// (the sqlite and PostgreSQL stores have them all). They are named here so
// that the pooledStore wrapping it has them too: without them the runtime
// would run the cases on these backends without deltas, reads of the
// latest checkpoint without the channels a run holds, stored documents
// (the version rule's old document), event logs or thread records.
type pooled interface {
	runtime.Checkpointer
	checkpoint.DeltaCheckpointer
	checkpoint.LatestReader
	checkpoint.DocumentStore
	checkpoint.EventStore
	checkpoint.ThreadLister
	checkpoint.ThreadRecorder
	Close() error
}

// storePool hands out stores, one case at a time each.
type storePool struct {
	name    string
	open    func(n int) (pooled, error) // opens the n-th store (1, 2, ...)
	locate  func(n int) string          // where another process opens the n-th store
	cleanup func() error                // after every store is closed
	opts    []runtime.RunOption         // what every run on the backend's stores adds (Drive)
	loc     map[pooled]string
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
	if p.loc == nil {
		p.loc = map[pooled]string{}
	}
	p.loc[s] = p.locate(p.n)
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

// runOptions are the run options of every run on the store (Drive).
func (s *pooledStore) runOptions() []runtime.RunOption { return s.pool.opts }

// location names the store for another process (killRun): the backend and
// the sqlite file or PostgreSQL schema.
func (s *pooledStore) location() (backend, store string) {
	s.pool.mu.Lock()
	defer s.pool.mu.Unlock()
	return s.pool.name, s.pool.loc[s.pooled]
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

// openPostgres opens the "postgres" backend (or the pool of schemas under
// the workers backend, called name): stores on the server named by
// EnvPostgresDSN, each in a schema of its own (a case's thread id is the
// same in every case) on one shared connection pool; Close drops the
// schemas. Like the sqlite backend's files, a schema serves one case at a
// time and is reused after its thread is deleted.
func openPostgres(name string) (Backend, error) {
	dsn := os.Getenv(EnvPostgresDSN)
	if dsn == "" {
		return Backend{}, fmt.Errorf("backend %s: %s is not set; set it to the server's URL, e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable", name, EnvPostgresDSN)
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
		return Backend{}, fmt.Errorf("backend %s: connect to %s: %w", name, EnvPostgresDSN, err)
	}
	prefix := fmt.Sprintf("ilmek_conformance_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	var schemas []string
	schemaOf := func(n int) string { return fmt.Sprintf("%s_%d", prefix, n) }
	p := &storePool{name: name, open: func(n int) (pooled, error) {
		schema := schemaOf(n)
		schemas = append(schemas, schema) // under the pool's lock
		return postgres.OpenPool(context.Background(), pool, postgres.Schema(schema))
	}, locate: schemaOf, cleanup: func() error {
		defer pool.Close()
		for _, s := range schemas {
			if _, err := pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+s+" CASCADE"); err != nil {
				return fmt.Errorf("backend %s: drop schema %s: %w", name, s, err)
			}
		}
		return nil
	}}
	return Backend{Name: name, New: p.get, Close: p.close}, nil
}

// openLocated opens, in another process (ServeHelper), the store a
// pooledStore's location names, with a short lease: the process is killed
// holding it, and the next run waits it out.
func openLocated(backend, store string) (runtime.Checkpointer, func() error, error) {
	switch backend {
	case "sqlite":
		s, err := sqlite.Open(store, sqlite.LeaseTTL(helperLeaseTTL))
		if err != nil {
			return nil, nil, fmt.Errorf("backend sqlite: open %s: %w", store, err)
		}
		return s, s.Close, nil
	case "sqlite-nextwrite":
		s, err := sqlite.Open(store, sqlite.LeaseTTL(helperLeaseTTL))
		if err != nil {
			return nil, nil, fmt.Errorf("backend %s: open %s: %w", backend, store, err)
		}
		// Lent as the backend lends its stores, so that Drive adds the
		// backend's run options.
		lent := &pooledStore{pooled: s, pool: &storePool{name: backend, opts: nextWrite}}
		return lent, s.Close, nil
	case "postgres":
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := postgres.Open(ctx, os.Getenv(EnvPostgresDSN), postgres.Schema(store), postgres.LeaseTTL(helperLeaseTTL))
		if err != nil {
			return nil, nil, fmt.Errorf("backend postgres: open schema %s: %w", store, err)
		}
		return s, s.Close, nil
	}
	return nil, nil, fmt.Errorf("backend %s: its stores cannot be opened by another process", backend)
}

// A lent store keeps the optional interfaces of the store it wraps.
var (
	_ checkpoint.DeltaCheckpointer = (*pooledStore)(nil)
	_ checkpoint.LatestReader      = (*pooledStore)(nil)
	_ checkpoint.DocumentStore     = (*pooledStore)(nil)
	_ checkpoint.EventStore        = (*pooledStore)(nil)
	_ checkpoint.ThreadLister      = (*pooledStore)(nil)
	_ checkpoint.ThreadRecorder    = (*pooledStore)(nil)
)
