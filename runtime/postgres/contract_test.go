package postgres_test

import (
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpointtest"
)

// TestContract runs the backend contract, each part on a schema of its own.
func TestContract(t *testing.T) {
	dsn(t)
	checkpointtest.Run(t, func(t *testing.T) runtime.Checkpointer {
		return openStore(t, "contract")
	})
}
