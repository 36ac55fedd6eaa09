package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// Store is a runtime.Checkpointer backed by one SQLite file. Create it with
// Open and Close it when done. It is safe for concurrent use, also by
// several processes on the same file (see the package documentation).
type Store struct {
	path string
	opts options
	w    *sql.DB // the one writer connection; every transaction is IMMEDIATE
	r    *sql.DB // read-only connections (w itself for an in-memory database)
	ws   prepared
	rs   prepared

	leases *store.Leases  // the leases this Store holds
	group  group          // the group commit of runs' writes
	cache  *channelsCache // rebuilt channels of recent checkpoints; nil when off

	chainReads atomic.Int64 // chains of deltas read from the file, for tests
	slowDeltas bool         // fastDelta off, for tests that compare both ways
}

var _ checkpoint.DeltaCheckpointer = (*Store)(nil)

// Option configures Open.
type Option func(*options)

type options struct {
	busy      time.Duration
	ttl       time.Duration
	sync      string
	readConns int
	compact   checkpoint.Compaction
	cache     int
}

// BusyTimeout sets how long a statement waits for another process's write
// to finish before it fails with "database is locked" (default 5 s).
func BusyTimeout(d time.Duration) Option { return func(o *options) { o.busy = d } }

// LeaseTTL sets how long a thread's lease lasts without renewal (default
// 30 s). The holder renews it every TTL/3; after a holder crashed, another
// process can take the thread over once the TTL has passed.
func LeaseTTL(d time.Duration) Option { return func(o *options) { o.ttl = d } }

// Synchronous sets SQLite's PRAGMA synchronous: "FULL" (the default: a
// commit, and so a journaled step, survives a power loss) or "NORMAL" (a
// commit survives a crash of the process but the last commits may be lost
// on power loss; several times faster on slow disks).
func Synchronous(mode string) Option { return func(o *options) { o.sync = mode } }

// ReadConns sets the number of read-only connections (default 4). Writes
// always use one connection.
func ReadConns(n int) Option { return func(o *options) { o.readConns = n } }

// Compact sets how often PutDelta stores a full snapshot of a thread's
// channels instead of a delta (checkpoint.Compaction; zero fields take
// checkpoint.DefaultCompaction).
func Compact(c checkpoint.Compaction) Option { return func(o *options) { o.compact = c } }

// CacheBytes sets the size of the Store's cache of rebuilt channels
// (default DefaultCacheBytes; 0 or less turns it off). For the threads it
// wrote or read most recently, the Store keeps the full channels of their
// latest checkpoint and the deltas committed after it, so that a run
// reading a thread's latest checkpoint does not read and apply its chain
// of deltas again: a long chat thread's turn then costs about what a short
// one's does. A state larger than a quarter of the cache is not kept.
func CacheBytes(n int) Option { return func(o *options) { o.cache = n } }

// DefaultLeaseTTL is the lease time to live unless LeaseTTL says otherwise.
const DefaultLeaseTTL = 30 * time.Second

// schemaVersion is the schema version this package writes and reads
// (ilmek_meta.schema_version).
const schemaVersion = 12

// Open opens (creating if needed) the SQLite database at path and its
// schema. path ":memory:" gives a private in-memory database, for tests.
func Open(path string, opts ...Option) (*Store, error) {
	o := options{busy: 5 * time.Second, ttl: DefaultLeaseTTL, sync: "FULL", readConns: 4, cache: DefaultCacheBytes}
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("sqlite.Open(%q): %w", path, err)
	}
	if path == "" {
		return nil, fmt.Errorf("sqlite.Open: empty path; pass a file name such as \"app.db\" (or \":memory:\" for a private in-memory database)")
	}
	s := &Store{path: path, opts: o, leases: store.NewLeases(o.ttl)}
	if o.cache > 0 {
		s.cache = newChannelsCache(o.cache)
	}
	memory := path == ":memory:"
	uri := "file::memory:"
	if !memory {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("sqlite.Open(%q): resolve path: %w", path, err)
		}
		if fi, err := os.Stat(filepath.Dir(abs)); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("sqlite.Open(%q): directory %s does not exist; create it first (os.MkdirAll) or choose another path", path, filepath.Dir(abs))
		}
		uri = "file:" + uriEscaper.Replace(abs)
	}
	common := fmt.Sprintf("?_txlock=immediate&_pragma=busy_timeout(%d)", o.busy.Milliseconds())
	// WAL mode is switched on after the schema check, so that a refused
	// file is left as it was.
	w, err := sql.Open("sqlite", uri+common+"&_pragma=synchronous("+o.sync+")")
	if err != nil {
		return nil, fmt.Errorf("sqlite.Open(%q): %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s.w, s.r = w, w
	if err := s.migrate(); err != nil {
		w.Close()
		if errors.Is(err, ErrSchema) {
			return nil, fmt.Errorf("sqlite.Open(%q): %w", path, err)
		}
		return nil, fmt.Errorf("sqlite.Open(%q): %w (is it an SQLite file this process may read and write?)", path, err)
	}
	if _, err := w.Exec("PRAGMA journal_mode=WAL"); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite.Open(%q): switch to WAL mode: %w", path, err)
	}
	if !memory && o.readConns > 0 {
		r, err := sql.Open("sqlite", uri+common+"&_query_only=1")
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("sqlite.Open(%q): read connections: %w", path, err)
		}
		r.SetMaxOpenConns(o.readConns)
		r.SetMaxIdleConns(o.readConns)
		s.r = r
	}
	if s.ws, err = prepare(s.w, writeQueries); err == nil {
		s.rs, err = prepare(s.r, readQueries)
	}
	if err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("sqlite.Open(%q): %w", path, err)
	}
	return s, nil
}

// uriEscaper escapes the characters that end or escape a path in an SQLite
// URI filename.
var uriEscaper = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

func (o options) validate() error {
	switch {
	case o.busy < 0:
		return fmt.Errorf("BusyTimeout(%v) must not be negative", o.busy)
	case o.ttl < 30*time.Millisecond:
		return fmt.Errorf("LeaseTTL(%v) is too short to renew; use at least 30ms (default %v)", o.ttl, DefaultLeaseTTL)
	case o.readConns < 0:
		return fmt.Errorf("ReadConns(%d) must not be negative", o.readConns)
	}
	switch o.sync {
	case "FULL", "NORMAL", "EXTRA", "OFF":
		return nil
	}
	return fmt.Errorf("Synchronous(%q): want \"FULL\", \"NORMAL\", \"EXTRA\" or \"OFF\"", o.sync)
}

// Path returns the path the Store was opened with.
func (s *Store) Path() string { return s.path }

// Close releases the leases the Store still holds and closes the database.
// The Store must not be used afterwards; release functions of its leases
// become no-ops.
func (s *Store) Close() error {
	if !s.leases.Close() {
		return nil
	}
	if err := s.closeDBs(); err != nil {
		return fmt.Errorf("sqlite: close %q: %w", s.path, err)
	}
	return nil
}

func (s *Store) closeDBs() error {
	s.ws.close()
	s.rs.close()
	var errs []error
	if s.r != s.w {
		errs = append(errs, s.r.Close())
	}
	errs = append(errs, s.w.Close())
	return errors.Join(errs...)
}

// tx runs fn in one IMMEDIATE transaction on the writer connection. When
// l is not nil (a run's write, fenced by its lease), the transaction first
// checks that the lease is still this Store's.
func (s *Store) tx(ctx context.Context, l *heldLease, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if l != nil {
		if err := s.checkFence(ctx, tx, l); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
