package postgres_test

import (
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/checkpointtest"
	"github.com/ilmek-go/ilmek/runtime/postgres"
)

// TestContract runs the backend contract, each part on a schema of its own.
func TestContract(t *testing.T) {
	dsn(t)
	checkpointtest.Run(t, func(t *testing.T) runtime.Checkpointer {
		return openStore(t, "contract")
	})
}

// TestContractCompactingOften runs the delta and prune parts of the
// contract on a Store that writes a snapshot every few deltas, so that
// compaction races the readers and the pruning of those tests.
func TestContractCompactingOften(t *testing.T) {
	if testing.Short() {
		t.Skip("the delta contract again, compacting often; go test without -short (as CI does) runs it")
	}
	dsn(t)
	checkpointtest.RunDeltas(t, func(t *testing.T) runtime.Checkpointer {
		return openStore(t, "compact", postgres.Compact(checkpoint.Compaction{Every: 7, Bytes: 300}))
	})
}
