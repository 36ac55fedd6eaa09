package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// Store is a runtime.Checkpointer on PostgreSQL. Create it with Open (from
// a connection string) or OpenPool (on a pool the caller owns) and Close it
// when done. It is safe for concurrent use, and any number of processes on
// any number of machines may open the same schema.
type Store struct {
	pool    *pgxpool.Pool
	ownPool bool
	schema  string
	opts    options
	q       statements

	leases *store.Leases  // the leases this Store holds
	retry  *store.Retrier // retries a run's writes after errors safe to retry

	commitSQLs sync.Map     // commit parts (uint16) → the one-statement commit's SQL (commit.go)
	docsStored sync.Map     // fingerprints of the documents this Store stored (PutDocument)
	docsCount  atomic.Int64 // about how many docsStored holds
}

var _ runtime.Checkpointer = (*Store)(nil)

// Option configures Open and OpenPool.
type Option func(*options)

type options struct {
	schema  string
	ttl     time.Duration
	owner   string
	compact checkpoint.Compaction

	retryBudget time.Duration
	onRetry     checkpoint.RetryFunc
}

// DefaultSchema is the PostgreSQL schema a Store uses unless Schema says
// otherwise.
const DefaultSchema = "ilmek"

// DefaultLeaseTTL is the lease time to live unless LeaseTTL says otherwise.
const DefaultLeaseTTL = 30 * time.Second

// Schema sets the PostgreSQL schema holding the Store's tables (default
// "ilmek"): a lower-case identifier, [a-z_][a-z0-9_]*. Open creates it.
// Stores on different schemas of one database share nothing.
func Schema(name string) Option { return func(o *options) { o.schema = name } }

// LeaseTTL sets how long a thread's lease lasts without renewal (default
// 30 s). The holder renews it every TTL/3; after a holder died or was cut
// off, another process can take the thread over once the TTL has passed.
// Expiry is measured on the server's clock.
func LeaseTTL(d time.Duration) Option { return func(o *options) { o.ttl = d } }

// Owner sets how the Store names itself in the lease rows it writes (shown
// in busy errors; default "pid N on HOST").
func Owner(name string) Option { return func(o *options) { o.owner = name } }

// Compact sets how often PutDelta stores a full snapshot instead of a
// delta. The default is DefaultCompaction: every delta of a chain is a row
// a read transfers and applies, so chains are kept shorter here than in
// the embedded stores.
func Compact(c checkpoint.Compaction) Option { return func(o *options) { o.compact = c } }

// DefaultCompaction is a snapshot every 100 deltas, or once the deltas
// outweigh the snapshot (checkpoint.Compaction with Bytes 0). On the chat
// workload (BENCHMARKS.md) it keeps a turn within about 1.2 times the cost
// of full snapshots, where 1,000 deltas cost 2.7 times.
var DefaultCompaction = checkpoint.Compaction{Every: 100}

func (o options) validate() error {
	switch {
	case !schemaName.MatchString(o.schema):
		return fmt.Errorf("Schema(%q): want a lower-case SQL identifier of at most 63 characters, [a-z_][a-z0-9_]*, such as %q", o.schema, DefaultSchema)
	case o.ttl < 30*time.Millisecond:
		return fmt.Errorf("LeaseTTL(%v) is too short to renew; use at least 30ms (default %v)", o.ttl, DefaultLeaseTTL)
	case o.retryBudget < 0:
		return fmt.Errorf("RetryBudget(%v) must not be negative; 0 turns retries off", o.retryBudget)
	case o.owner == "":
		return fmt.Errorf("Owner(\"\"): the owner name must not be empty")
	}
	return nil
}

// Open connects to the database at dsn (a postgres:// URL or a key=value
// connection string, as pgx reads it), creates or migrates the schema, and
// returns a Store that owns its connection pool; Close closes it.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres.Open: parse the connection string: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres.Open: %w", err)
	}
	s, err := open(ctx, pool, true, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// OpenPool is Open on a pool the caller made and keeps: Close leaves it
// open.
func OpenPool(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("postgres.OpenPool: the pool is nil; make one with pgxpool.New")
	}
	return open(ctx, pool, false, opts)
}

func open(ctx context.Context, pool *pgxpool.Pool, own bool, opts []Option) (*Store, error) {
	o := options{schema: DefaultSchema, ttl: DefaultLeaseTTL, owner: store.Holder, compact: DefaultCompaction, retryBudget: DefaultRetryBudget}
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("postgres.Open: %w", err)
	}
	if err := migrate(ctx, pool, o.schema); err != nil {
		host := pool.Config().ConnConfig.Host
		return nil, fmt.Errorf("postgres.Open (server %s, database %q): %w", host, pool.Config().ConnConfig.Database, err)
	}
	s := &Store{pool: pool, ownPool: own, schema: o.schema, opts: o, q: newStatements(quote(o.schema)), leases: store.NewLeases(o.ttl)}
	s.retry = s.retrier()
	return s, nil
}

// Pool returns the Store's connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// SchemaName returns the PostgreSQL schema holding the Store's tables.
func (s *Store) SchemaName() string { return s.schema }

// Close releases the leases the Store still holds and, when Open made the
// pool, closes it. The Store must not be used afterwards; release functions
// of its leases become no-ops.
func (s *Store) Close() error {
	if !s.leases.Close() {
		return nil
	}
	if s.ownPool {
		s.pool.Close()
	}
	return nil
}

// where names the Store in errors.
func (s *Store) where() string {
	return fmt.Sprintf("schema %q", s.schema)
}
