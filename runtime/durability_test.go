package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// batchMemory is checkpoint.Memory with leases that write batches
// (checkpoint.BatchLease), one commit after another, failing the batch
// failAt (1-based) with errBatch before it writes anything.
type batchMemory struct {
	*checkpoint.Memory
	failAt  int32
	batches atomic.Int32
}

var errBatch = errors.New("the test failed this batch")

func (m *batchMemory) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l, err := m.Memory.Lease(ctx, thread, opts)
	if err != nil {
		return nil, err
	}
	return &batchLease{Lease: l, m: m}, nil
}

type batchLease struct {
	checkpoint.Lease
	m *batchMemory
}

func (l *batchLease) CommitBatch(ctx context.Context, cs []checkpoint.Commit, j *checkpoint.JournalWrite) error {
	if l.m.batches.Add(1) == l.m.failAt {
		return errBatch
	}
	return commitEach(ctx, l, cs, j)
}

// commitEach writes a batch through l one commit after another, then its
// journal: a test lease's CommitBatch.
func commitEach(ctx context.Context, l checkpoint.Lease, cs []checkpoint.Commit, j *checkpoint.JournalWrite) error {
	for _, c := range cs {
		if err := l.Commit(ctx, c); err != nil {
			return err
		}
	}
	if j != nil {
		return l.PutJournal(ctx, j.TaskID, j.Entries)
	}
	return nil
}

// logChain is a graph of n nodes in a row, each appending its name to
// the channel log.
func logChain(t *testing.T, name string, n int) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	b := runtime.NewBuilder(name).Channel("log", spec.Append)
	prev := spec.Start
	for i := range n {
		node := fmt.Sprintf("n%d", i)
		b.Node(node, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{"log": node}, nil
		}).Edge(prev, node)
		prev = node
	}
	g, err := b.Edge(prev, spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestKeptCommitLostKeepsTheEventLog: when the write that carries a kept
// checkpoint fails, the run ends with the write's error, its result names
// the checkpoint the thread has, and the events that rode with the kept
// checkpoint are stored by the run's last write: the run's stored events
// run from 1 to its run_end without a gap.
func TestKeptCommitLostKeepsTheEventLog(t *testing.T) {
	g := logChain(t, "log", 5)
	// Batches: [start, n0] then [n1, n2], which fails.
	m := &batchMemory{Memory: checkpoint.NewMemory(), failAt: 2}
	res, err := g.Thread(m, "t").Invoke(t.Context(), nil, runtime.WithEventLog(), runtime.WithDurability(runtime.DurableWithNextWrite))
	if res.Status != runtime.StatusError || !errors.Is(err, errBatch) {
		t.Fatalf("run: %v %v; want an error wrapping the batch's", res.Status, err)
	}
	latest, err := m.Get(t.Context(), "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if latest.Step != 1 || res.CheckpointID != latest.ID {
		t.Errorf("latest checkpoint %s at step %d, result's %s; want the result to name the latest, at step 1", latest.ID, latest.Step, res.CheckpointID)
	}
	evs, err := m.ReadEvents(t.Context(), res.RunID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("stored event %d has seq %d: a gap (%d events stored)", i, e.Seq, len(evs))
		}
	}
	if n := len(evs); n == 0 || evs[n-1].Kind != string(runtime.EventRunEnd) {
		t.Fatalf("stored events do not end with run_end: %d events", n)
	}
	var steps int
	for _, e := range evs {
		if e.Kind == string(runtime.EventStepStart) {
			steps++
		}
	}
	if steps != 3 {
		t.Errorf("%d step_start events stored, want 3 (n0, n1 kept and lost, n2)", steps)
	}
}

// TestWithDurabilityRefusesUnknownValues: a Durability that is none of
// the constants is refused with an *OptionError, given to a graph or to a
// run.
func TestWithDurabilityRefusesUnknownValues(t *testing.T) {
	b := runtime.NewBuilder("d").Channel("n", spec.LastWrite).
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"n": 1}, nil }).
		Edge(spec.Start, "a")
	var oe *runtime.OptionError
	if _, err := b.Compile(runtime.WithDurability(runtime.Durability(9))); !errors.As(err, &oe) {
		t.Errorf("a graph given WithDurability(9): %v, want an *OptionError", err)
	}
	g, err := b.Compile(runtime.WithDurability(runtime.DurableWithNextWrite))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(t.Context(), nil, runtime.WithDurability(runtime.Durability(3))); !errors.As(err, &oe) {
		t.Errorf("a run given WithDurability(3): %v, want an *OptionError", err)
	}
	if res, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(t.Context(), nil, runtime.WithDurability(runtime.DurableEachSuperstep)); err != nil || res.Status != runtime.StatusDone {
		t.Errorf("a run given DurableEachSuperstep: %v %v", res.Status, err)
	}
}
