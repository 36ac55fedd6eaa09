package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/checkpointtest"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// open opens a Store on a fresh file in t's temp dir, closed at cleanup.
func open(t testing.TB, opts ...sqlite.Option) (*sqlite.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ilmek.db")
	s, err := sqlite.Open(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close %s: %v", path, err)
		}
	})
	return s, path
}

// TestContract runs the backend contract on files. It uses synchronous
// NORMAL: every commit stays atomic and survives a crash of the process,
// only the fsync that a power loss needs is skipped, which keeps the
// thousands of commits fast. The crash, lease and
// example tests use the default, FULL.
func TestContract(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) runtime.Checkpointer {
		s, _ := open(t, sqlite.Synchronous("NORMAL"))
		return s
	})
}

// TestContractInMemoryDatabase runs the contract on ":memory:", where the
// Store has one connection for reads and writes.
func TestContractInMemoryDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("the contract again, on an in-memory database; go test without -short (as CI does) runs it")
	}
	checkpointtest.Run(t, func(t *testing.T) runtime.Checkpointer {
		s, err := sqlite.Open(":memory:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestContractCompactingOften runs the delta and prune parts of the
// contract on a Store that writes a snapshot every few deltas.
func TestContractCompactingOften(t *testing.T) {
	if testing.Short() {
		t.Skip("the delta contract again, compacting often; go test without -short (as CI does) runs it")
	}
	checkpointtest.RunDeltas(t, func(t *testing.T) runtime.Checkpointer {
		s, _ := open(t, sqlite.Synchronous("NORMAL"), sqlite.Compact(checkpoint.Compaction{Every: 7, Bytes: 300}))
		return s
	})
}
