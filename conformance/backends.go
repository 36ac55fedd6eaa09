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

	"github.com/ilmek-go/ilmek/runtime"
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

// BackendNames are the checkpointer backends OpenBackend knows.
var BackendNames = []string{"memory", "sqlite"}

// OpenBackend returns the backend called name: "memory" (a new
// runtime.NewMemory per case) or "sqlite" (runtime/sqlite files in a
// temporary directory that Close removes). Each sqlite checkpointer New
// returns is a database file of its own while its case runs; closing it
// deletes the case's thread (runtime.Checkpointer.DeleteThread) and gives
// the file to the next case, since creating a database costs far more
// than a case.
func OpenBackend(name string) (Backend, error) {
	switch name {
	case "memory":
		return Backend{Name: name, New: func() runtime.Checkpointer { return runtime.NewMemory() }, Close: func() error { return nil }}, nil
	case "sqlite":
		dir, err := os.MkdirTemp("", "ilmek-conformance-sqlite-")
		if err != nil {
			return Backend{}, fmt.Errorf("backend sqlite: make a directory for the database files: %w", err)
		}
		p := &storePool{dir: dir}
		return Backend{Name: name, New: p.get, Close: p.close}, nil
	}
	return Backend{}, fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(BackendNames, ", "))
}

// knownBackend reports whether name is one of BackendNames.
func knownBackend(name string) bool { return slices.Contains(BackendNames, name) }

// storePool hands out SQLite stores, one case at a time each.
type storePool struct {
	dir  string
	mu   sync.Mutex
	n    int
	free []*sqlite.Store
	all  []*sqlite.Store
}

// get returns a free store, opening a new file when none is free.
func (p *storePool) get() runtime.Checkpointer {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		return &pooledStore{Store: s, pool: p}
	}
	p.n++
	path := filepath.Join(p.dir, fmt.Sprintf("cases-%d.db", p.n))
	s, err := sqlite.Open(path)
	if err != nil {
		return brokenCheckpointer{fmt.Errorf("backend sqlite: open %s: %w", path, err)}
	}
	p.all = append(p.all, s)
	return &pooledStore{Store: s, pool: p}
}

// close closes every store and removes the directory.
func (p *storePool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, s := range p.all {
		errs = append(errs, s.Close())
	}
	p.all, p.free = nil, nil
	errs = append(errs, os.RemoveAll(p.dir))
	return errors.Join(errs...)
}

// pooledStore is a store lent to one case.
type pooledStore struct {
	*sqlite.Store
	pool *storePool
}

// Close deletes the case's thread and returns the store to the pool; a
// store whose thread cannot be deleted is not reused.
func (s *pooledStore) Close() error {
	if err := s.DeleteThread(context.Background(), Thread); err != nil {
		return fmt.Errorf("backend sqlite: delete thread %q of %s after its case: %w", Thread, s.Path(), err)
	}
	s.pool.mu.Lock()
	defer s.pool.mu.Unlock()
	s.pool.free = append(s.pool.free, s.Store)
	return nil
}
