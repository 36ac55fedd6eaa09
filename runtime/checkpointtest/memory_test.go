package checkpointtest_test

import (
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpointtest"
)

func TestMemory(t *testing.T) {
	checkpointtest.Run(t, func(*testing.T) runtime.Checkpointer { return runtime.NewMemory() })
}
