package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// durableChain is a chain of n nodes appending their names to "log".
// Node i runs a Step when steps(i); after the Step returns it records how
// many checkpoints the thread has in the file (seen[i]), and it runs
// fail(i) last.
type durableChain struct {
	s       *Store
	n       int
	steps   func(i int) bool
	fail    func(i int) error
	effects atomic.Int64
	seen    []int
}

func (c *durableChain) graph(t *testing.T, opts ...runtime.Option) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	c.seen = make([]int, c.n)
	b := runtime.NewBuilder("durable").Channel("log", spec.Append)
	prev := spec.Start
	for i := range c.n {
		name := fmt.Sprintf("n%d", i)
		b = b.Node(name, func(ctx *runtime.Ctx, st runtime.Values) (runtime.Values, error) {
			if c.steps != nil && c.steps(i) {
				if _, err := runtime.Step(ctx, "effect", func() (int64, error) { return c.effects.Add(1), nil }); err != nil {
					return nil, err
				}
				c.seen[i] = rowCount(t, c.s, "SELECT count(*) FROM ilmek_checkpoints")
			}
			if c.fail != nil {
				if err := c.fail(i); err != nil {
					return nil, err
				}
			}
			return runtime.Values{"log": name}, nil
		}).Edge(prev, name)
		prev = name
	}
	g, err := b.Edge(prev, spec.End).Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestDurableWithNextWrite: a run with DurableWithNextWrite writes two
// supersteps' checkpoints per transaction, and a Step's journal with the
// checkpoint its task was planned at, yet ends with exactly what a run
// durable at every superstep stores: the same checkpoints, the same state,
// and every Step run once, its planning checkpoint in the file before the
// Step returns.
func TestDurableWithNextWrite(t *testing.T) {
	const n = 9
	stored := map[runtime.Durability][]string{}
	for _, tc := range []struct {
		name  string
		d     runtime.Durability
		steps func(int) bool
		// transactions the run writes: the lease's take is not one of
		// the group's
		batches int
	}{
		{"each superstep, no steps", runtime.DurableEachSuperstep, nil, 1 + n},
		{"with next write, no steps", runtime.DurableWithNextWrite, nil, (1 + n) / 2},
		{"each superstep, steps", runtime.DurableEachSuperstep, func(i int) bool { return i%3 == 1 }, 1 + n + 3},
		// start+n0 | n1's journal with n1's plan | n2+n3 | n4's journal with n3 | n4+n5 | n7's journal with n6 | n7+n8
		{"with next write, steps", runtime.DurableWithNextWrite, func(i int) bool { return i%3 == 1 }, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openT(t, filepath.Join(t.TempDir(), "d.db"))
			c := &durableChain{s: s, n: n, steps: tc.steps}
			g := c.graph(t)
			before := s.group.batches
			res, err := g.Thread(s, "t").Invoke(t.Context(), nil, runtime.WithDurability(tc.d))
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("run: %v %v", res.Status, err)
			}
			if got := s.group.batches - before; got != tc.batches {
				t.Errorf("%d transactions, want %d", got, tc.batches)
			}
			for i := range n {
				// Node i runs in superstep i+1, planned at the checkpoint
				// of superstep i: the run's first checkpoint and i more.
				if tc.steps != nil && tc.steps(i) && c.seen[i] != i+1 {
					t.Errorf("node n%d: %d checkpoints in the file when its Step returned, want %d", i, c.seen[i], i+1)
				}
			}
			if tc.steps != nil && c.effects.Load() != 3 {
				t.Errorf("%d effects, want 3", c.effects.Load())
			}
			cps, err := s.List(t.Context(), "t", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(cps) != n+1 || cps[0].ID != res.CheckpointID {
				t.Fatalf("%d checkpoints, latest %s; want %d, latest %s", len(cps), cps[0].ID, n+1, res.CheckpointID)
			}
			st, err := g.Thread(s, "t").State(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			log := fmt.Sprint(st.State["log"])
			stored[tc.d] = append(stored[tc.d], log)
			if want := "[n0 n1 n2 n3 n4 n5 n6 n7 n8]"; log != want {
				t.Errorf("state %s, want %s", log, want)
			}
			if rowCount(t, s, "SELECT count(*) FROM ilmek_journals") != 0 || rowCount(t, s, "SELECT count(*) FROM ilmek_leases") != 0 {
				t.Error("journals or the lease left after the run")
			}
		})
	}
	if diff := cmp.Diff(stored[runtime.DurableEachSuperstep], stored[runtime.DurableWithNextWrite]); diff != "" {
		t.Errorf("stored states differ (-each +next):\n%s", diff)
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
			c := &durableChain{s: s, n: 6, steps: func(i int) bool { return i%3 == 1 }}
			c.fail = func(i int) error {
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
			g := c.graph(t)
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
			st, err := th.State(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if log := fmt.Sprint(st.State["log"]); log != "[n0 n1 n2 n3 n4 n5]" {
				t.Errorf("state after the retry %s", log)
			}
			if got := c.effects.Load(); got != 2 {
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
	c := &durableChain{s: s, n: n}
	g := c.graph(t, runtime.WithDurability(runtime.DurableWithNextWrite))
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
