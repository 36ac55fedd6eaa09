// Package checkpointtest is the contract every runtime.Checkpointer backend
// passes. A backend's test calls Run with a constructor of fresh, empty
// checkpointers:
//
//	func TestContract(t *testing.T) {
//		checkpointtest.Run(t, func(t *testing.T) runtime.Checkpointer {
//			s, err := mybackend.Open(filepath.Join(t.TempDir(), "cp.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// The semantics are those of checkpoint.Memory, the reference backend.
package checkpointtest

import (
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
)

// NewFunc returns a fresh, empty checkpointer for one subtest; it registers
// its own cleanup with t. Run calls it from parallel subtests.
type NewFunc func(t *testing.T) runtime.Checkpointer

// contract is one named part of the contract.
type contract struct {
	name string
	test func(t *testing.T, cp runtime.Checkpointer)
}

// Run runs the whole contract against the backend newCP makes: the storage
// operations, journals, leases, concurrent use, many threads, and real
// graph runs (steps, interrupts, resume, retry after an error) through it.
// Each part gets its own checkpointer and runs in parallel with the others.
func Run(t *testing.T, newCP NewFunc) {
	t.Helper()
	var all []contract
	all = append(all, checkpointContracts...)
	all = append(all, latestContracts...)
	all = append(all, batchContracts...)
	all = append(all, journalContracts...)
	all = append(all, leaseContracts...)
	all = append(all, fencingContracts...)
	all = append(all, cancelContracts...)
	all = append(all, answerContracts...)
	all = append(all, loadContracts...)
	all = append(all, graphContracts...)
	all = append(all, deltaContracts...)
	all = append(all, pruneContracts...)
	all = append(all, versionContracts...)
	all = append(all, threadContracts...)
	all = append(all, eventContracts...)
	all = append(all, forkContracts...)
	all = append(all, scheduleContracts...)
	for _, c := range all {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, newCP(t))
		})
	}
}

// RunDeltas runs the parts of the contract about incremental checkpoints
// and pruning only: for a second run of a backend configured to compact
// often (a snapshot every few deltas), so that compaction races the
// readers and the pruning of those tests.
func RunDeltas(t *testing.T, newCP NewFunc) {
	t.Helper()
	for _, c := range append(append([]contract{}, deltaContracts...), pruneContracts...) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, newCP(t))
		})
	}
}
