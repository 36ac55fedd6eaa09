package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// fencedMemory is a memory store whose leases refuse every journal write
// with the store's fence: another process took the thread over, and the
// run learns it from its next write, not from its lease's keeper.
type fencedMemory struct{ *checkpoint.Memory }

func (m fencedMemory) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l, err := m.Memory.Lease(ctx, thread, opts)
	if err != nil {
		return nil, err
	}
	return fencedLease{l, thread}, nil
}

type fencedLease struct {
	checkpoint.Lease
	thread string
}

func (l fencedLease) PutJournal(context.Context, string, []checkpoint.JournalEntry) error {
	return &checkpoint.LeaseLostError{Thread: l.thread, Fence: l.Fence(), Reason: checkpoint.LeaseTakenOver, Found: "fence"}
}

// TestRunEndsWithItsOwnLostLease: a run whose Step's journal write finds
// its thread's lease lost ends failed with the runtime's error of a lost
// lease ("checkpointer lease: ..."), not with the node's error that
// carried it; a node's error naming another thread's lost lease stays the
// node's. A waker continues a run by that text (a run that lost its lease
// takes its work up again), and only such a run.
func TestRunEndsWithItsOwnLostLease(t *testing.T) {
	for _, c := range []struct {
		name   string
		node   func(*runtime.Ctx) error
		prefix string
	}{
		{"a Step's journal write fenced", func(c *runtime.Ctx) error {
			_, err := runtime.Step(c, "pay", func() (int, error) { return 1, nil })
			return err
		}, "checkpointer lease: "},
		{"another thread's lost lease", func(*runtime.Ctx) error {
			return fmt.Errorf("the report's run: %w", &checkpoint.LeaseLostError{Thread: "report", Fence: "3", Reason: checkpoint.LeaseDeadlinePassed, Found: "deadline"})
		}, `node "n"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := runtime.NewBuilder("g").Channel("out", "").
				Node("n", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					return nil, c.node(ctx)
				}).Edge(spec.Start, "n").Compile()
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Thread(fencedMemory{checkpoint.NewMemory()}, "t").Invoke(context.Background(), nil)
			if res.Status != runtime.StatusError || err == nil || !strings.HasPrefix(err.Error(), c.prefix) || !errors.Is(err, checkpoint.ErrLeaseLost) {
				t.Errorf("the run ended %q with %v; want error, its text starting %q, matching ErrLeaseLost", res.Status, err, c.prefix)
			}
		})
	}
}
