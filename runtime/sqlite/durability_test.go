package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/internal/queuehook"
	"github.com/ilmek-go/ilmek/runtime/internal/store/storetest"
)

// stepsEvery3 runs a Step in nodes n1, n4, n7, ...
func stepsEvery3(i int) bool { return i%3 == 1 }

// countAt returns an after function for storetest.StepChain that records
// in seen[i] how many checkpoints s holds when node i's Step returned.
func countAt(t *testing.T, s *Store, seen []int) func(*runtime.Ctx, int) error {
	return func(_ *runtime.Ctx, i int) error {
		seen[i] = rowCount(t, s, "SELECT count(*) FROM ilmek_checkpoints")
		return nil
	}
}

// TestDurableWithNextWrite: a run with DurableWithNextWrite writes two
// supersteps' checkpoints per transaction, and a Step's journal with the
// checkpoint its task was planned at, yet ends with exactly what a run
// durable at every superstep stores: the same checkpoints, the same state,
// and every Step run once, its planning checkpoint in the file before the
// Step returns.
func TestDurableWithNextWrite(t *testing.T) {
	const n = 9
	for _, tc := range []struct {
		name  string
		d     runtime.Durability
		steps func(int) bool
		// transactions the run writes: the lease's take is not one of
		// the group's
		batches int
		// keepFirst gives the run queuehook.KeepFirst (a queued start
		// request's run): its first checkpoint waits for the next write.
		keepFirst bool
	}{
		{"each superstep, no steps", runtime.DurableEachSuperstep, nil, 1 + n, false},
		{"with next write, no steps", runtime.DurableWithNextWrite, nil, (1 + n) / 2, false},
		{"each superstep, steps", runtime.DurableEachSuperstep, stepsEvery3, 1 + n + 3, false},
		// start+n0 | n1's journal with n1's plan | n2+n3 | n4's journal with n3 | n4+n5 | n7's journal with n6 | n7+n8
		{"with next write, steps", runtime.DurableWithNextWrite, stepsEvery3, 7, false},
		// start+n0, then each superstep alone
		{"first kept, no steps", runtime.DurableEachSuperstep, nil, n, true},
		// start+n0, then as each superstep: n1's journal alone, ...
		{"first kept, steps", runtime.DurableEachSuperstep, stepsEvery3, n + 3, true},
		{"first kept with next write, no steps", runtime.DurableWithNextWrite, nil, (1 + n) / 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openT(t, filepath.Join(t.TempDir(), "d.db"))
			var effects atomic.Int64
			seen := make([]int, n)
			g := storetest.StepChain(t, n, tc.steps, &effects, countAt(t, s, seen), nil)
			before := s.group.batches
			opts := []runtime.RunOption{runtime.WithDurability(tc.d)}
			if tc.keepFirst {
				opts = append(opts, queuehook.KeepFirst.(runtime.RunOption))
			}
			res, err := g.Thread(s, "t").Invoke(t.Context(), nil, opts...)
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("run: %v %v", res.Status, err)
			}
			if got := s.group.batches - before; got != tc.batches {
				t.Errorf("%d transactions, want %d", got, tc.batches)
			}
			for i := range n {
				// Node i runs in superstep i+1, planned at the checkpoint
				// of superstep i: the run's first checkpoint and i more.
				if tc.steps != nil && tc.steps(i) && seen[i] != i+1 {
					t.Errorf("node n%d: %d checkpoints in the file when its Step returned, want %d", i, seen[i], i+1)
				}
			}
			if tc.steps != nil && effects.Load() != 3 {
				t.Errorf("%d effects, want 3", effects.Load())
			}
			cps, err := s.List(t.Context(), "t", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(cps) != n+1 || cps[0].ID != res.CheckpointID {
				t.Fatalf("%d checkpoints, latest %s; want %d, latest %s", len(cps), cps[0].ID, n+1, res.CheckpointID)
			}
			storetest.CheckLog(t, g.Thread(s, "t"), n)
			if rowCount(t, s, "SELECT count(*) FROM ilmek_journals") != 0 || rowCount(t, s, "SELECT count(*) FROM ilmek_leases") != 0 {
				t.Error("journals or the lease left after the run")
			}
		})
	}
}

// TestDurableWithNextWriteFailures: a kept checkpoint is written before a
// run that fails or is cancelled ends, so the thread's latest checkpoint
// is the run's result's, and a retry neither repeats a Step nor skips a
// superstep. When the kept checkpoint cannot be written (the lease was
// taken over), the run fails and its result names the checkpoint the
// thread does have.
func TestDurableWithNextWriteFailures(t *testing.T) {
	errNode := errors.New("node failed")
	for _, tc := range []struct {
		name string
		at   int // the node that fails once
		lose bool
	}{
		// Node n2 runs in superstep 3 while the checkpoint of superstep 2
		// is kept; n4 runs with superstep 4's kept until its Step writes it.
		{"a node fails under a kept checkpoint", 2, false},
		{"a node fails after its Step wrote the kept checkpoint", 4, false},
		{"the lease is taken over under a kept checkpoint", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openT(t, filepath.Join(t.TempDir(), "f.db"))
			failed := false
			var effects atomic.Int64
			fail := func(i int) error {
				if i != tc.at || failed {
					return nil
				}
				failed = true
				if tc.lose {
					if _, err := s.w.Exec("UPDATE ilmek_leases SET owner = 'another run'"); err != nil {
						return err
					}
				}
				return errNode
			}
			g := storetest.StepChain(t, 6, stepsEvery3, &effects, nil, fail)
			th := g.Thread(s, "t")
			opt := runtime.WithDurability(runtime.DurableWithNextWrite)
			res, err := th.Invoke(t.Context(), nil, opt)
			if res.Status != runtime.StatusError || !errors.Is(err, errNode) {
				t.Fatalf("run: %v %v, want an error wrapping the node's", res.Status, err)
			}
			if tc.lose != errors.Is(err, ErrLeaseLost) {
				t.Fatalf("run's error %v: matches ErrLeaseLost %v, want %v", err, errors.Is(err, ErrLeaseLost), tc.lose)
			}
			cps, err := s.List(t.Context(), "t", 0)
			if err != nil {
				t.Fatal(err)
			}
			// Without a loss, every superstep before the failing one
			// is stored: the first checkpoint and tc.at more.
			want := tc.at + 1
			if tc.lose {
				want = tc.at // the kept one was lost
			}
			if len(cps) != want || cps[0].ID != res.CheckpointID {
				t.Fatalf("%d checkpoints, latest %s; want %d, the result's %s", len(cps), cps[0].ID, want, res.CheckpointID)
			}
			if tc.lose {
				if _, err := s.w.Exec("DELETE FROM ilmek_leases"); err != nil {
					t.Fatal(err)
				}
			}
			res, err = th.Invoke(t.Context(), nil, opt)
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("retry: %v %v", res.Status, err)
			}
			storetest.CheckLog(t, th, 6)
			if got := effects.Load(); got != 2 {
				t.Errorf("%d effects, want 2: a journaled Step ran again", got)
			}
		})
	}
}

// TestDurabilityGraphOption: WithDurability given to a graph applies to
// every run of it, and a run's own WithDurability wins over it.
func TestDurabilityGraphOption(t *testing.T) {
	const n = 9
	s := openT(t, filepath.Join(t.TempDir(), "g.db"))
	g := storetest.StepChain(t, n, nil, nil, nil, nil, runtime.WithDurability(runtime.DurableWithNextWrite))
	for i, tc := range []struct {
		opts    []runtime.RunOption
		batches int
	}{
		{nil, (1 + n) / 2},
		{[]runtime.RunOption{runtime.WithDurability(runtime.DurableEachSuperstep)}, 1 + n},
	} {
		before := s.group.batches
		res, err := g.Thread(s, fmt.Sprint("t", i)).Invoke(t.Context(), nil, tc.opts...)
		if err != nil || res.Status != runtime.StatusDone {
			t.Fatalf("run %d: %v %v", i, res.Status, err)
		}
		if got := s.group.batches - before; got != tc.batches {
			t.Errorf("run %d: %d transactions, want %d", i, got, tc.batches)
		}
	}
}
