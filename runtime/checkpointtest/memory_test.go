package checkpointtest_test

import (
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/checkpointtest"
)

func TestMemory(t *testing.T) {
	checkpointtest.Run(t, func(*testing.T) runtime.Checkpointer { return checkpoint.NewMemory() })
}

func TestMemoryCompactingOften(t *testing.T) {
	checkpointtest.RunDeltas(t, func(*testing.T) runtime.Checkpointer {
		m := checkpoint.NewMemory(checkpoint.Compact(checkpoint.Compaction{Every: 7, Bytes: 300}))
		return m
	})
}
