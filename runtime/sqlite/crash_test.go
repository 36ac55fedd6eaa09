package sqlite_test

import (
	"testing"

	"github.com/ilmek-go/ilmek/runtime/internal/crashtest"
)

// crashKinds are the program kinds the SIGKILL test runs. Hook for the
// generated kind: add a crashtest.Kind whose Build constructs the generated
// graph (nodes "a" and "b" calling fx.A and fx.B, see crashtest.Kind).
var crashKinds = []crashtest.Kind{
	crashtest.CodeBuilt,
	crashtest.SpecBuilt,
}

// TestCrashMidSuperstepReplaysCompletedStep kills a process with SIGKILL
// after one task's step completed and before its superstep committed; a
// restarted process finishes the thread without calling the step again.
func TestCrashMidSuperstepReplaysCompletedStep(t *testing.T) {
	t.Parallel()
	for _, kind := range crashKinds {
		t.Run(kind.Name, func(t *testing.T) {
			t.Parallel()
			crashtest.Crash(t, openForProcesses, kind)
		})
	}
}
