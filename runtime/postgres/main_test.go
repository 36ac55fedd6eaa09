package postgres_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/internal/testhook"
	"github.com/ilmek-go/ilmek/runtime/postgres"
)

// dsn returns the test server's connection string (pgtest.DSN: skip
// without one, unless CI=true).
func dsn(t testing.TB) string { return pgtest.DSN(t) }

var (
	poolOnce sync.Once
	pool     *pgxpool.Pool
	poolErr  error
	schemas  atomic.Int64
)

// sharedPool is one pool for the package's stores, so that parallel
// subtests do not each open their own connections.
func sharedPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	d := dsn(t)
	poolOnce.Do(func() {
		cfg, err := pgxpool.ParseConfig(d)
		if err != nil {
			poolErr = err
			return
		}
		cfg.MaxConns = 16
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pool, poolErr = pgxpool.NewWithConfig(ctx, cfg)
		if poolErr == nil {
			poolErr = pool.Ping(ctx)
		}
	})
	if poolErr != nil {
		t.Fatalf("PostgreSQL at %s=%q is unreachable: %v", pgtest.EnvDSN, d, poolErr)
	}
	return pool
}

// newSchema returns a schema name no other test (of this or another
// process) uses, and drops it at cleanup.
func newSchema(t testing.TB, what string) string {
	t.Helper()
	p := sharedPool(t)
	name := fmt.Sprintf("ilmek_pgtest_%s_%d_%d", what, os.Getpid(), schemas.Add(1))
	t.Cleanup(func() {
		if _, err := p.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
			t.Errorf("drop test schema %s: %v", name, err)
		}
	})
	return name
}

// openStore opens a Store on the shared pool in a fresh schema, closed at
// cleanup.
func openStore(t testing.TB, what string, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	p := sharedPool(t)
	s, err := postgres.OpenPool(context.Background(), p, append([]postgres.Option{postgres.Schema(newSchema(t, what))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// TestMain lets the test binary run as a child process of the
// multi-process tests (see processes_test.go) before it runs any test.
func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		if err := child(mode); err != nil {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", mode, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	testhook.VerifyUnlessBenchmarking()
	code := m.Run()
	if pool != nil {
		pool.Close()
	}
	os.Exit(code)
}
