package runtime_test

import (
	"iter"
	"os"
	"testing"

	"github.com/ilmek-go/ilmek/internal/testhook"

	"github.com/ilmek-go/ilmek/runtime"
)

// TestMain runs the tests with the check that each superstep's encoded
// writes give the state a full encoding would have stored.
func TestMain(m *testing.M) {
	if mode := os.Getenv(envSubgraphCrash); mode != "" {
		os.Exit(subgraphCrashChild(mode, os.Getenv(envSubgraphCrashDir)))
	}
	testhook.VerifyUnlessBenchmarking()
	os.Exit(m.Run())
}

func iterPull(s iter.Seq2[runtime.Event, error]) (func() (runtime.Event, bool), func()) {
	next, stop := iter.Pull2(s)
	return func() (runtime.Event, bool) {
		ev, _, ok := next()
		return ev, ok
	}, stop
}
