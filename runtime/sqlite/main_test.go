package sqlite_test

import (
	"os"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/testhook"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/internal/crashtest"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// testTTL is the lease TTL of the multi-process tests: short, so that a
// killed holder's lease expires quickly.
const testTTL = time.Second

// openForProcesses is how the parent and the child processes of the
// multi-process tests open the store: default options but the lease TTL.
func openForProcesses(path string) (runtime.Checkpointer, func() error, error) {
	s, err := sqlite.Open(path, sqlite.LeaseTTL(testTTL))
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

// TestMain lets the test binary run as a child process of the
// multi-process tests (crashtest.Start) before it runs any test.
func TestMain(m *testing.M) {
	stallChild()
	nextWriteChild()
	crashtest.Main(openForProcesses, crashKinds...)
	testhook.VerifyUnlessBenchmarking()
	os.Exit(m.Run())
}
