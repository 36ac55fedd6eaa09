package server

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// probedStore is a SQLite store whose first Lease of thread calls
// before first: what happens elsewhere between a server's reads of a
// run's thread and its probe of the thread's lease (Server.leaseFree).
type probedStore struct {
	*sqlite.Store
	thread string
	before func()
	once   sync.Once
}

func (s *probedStore) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	if thread == s.thread {
		s.once.Do(s.before)
	}
	return s.Store.Lease(ctx, thread, opts)
}

// TestLostEndProbeAfterRunEnded: server b reads a run of server a (another
// process on the same SQLite file) that has no run_end in the event log
// yet, and probes the thread's lease; the run ends done in between (it
// records its outcome as it gives the lease back, before its run_end
// reaches the log). b finds the lease free, and must read the run as the
// thread's outcome says, done. Before, b decided on the thread's record
// read before the probe, which had no outcome since the run began, and
// read the run aborted, "the run's process ended before the run did":
// a wrong outcome, which /wait returned as the run's end.
func TestLostEndProbeAfterRunEnded(t *testing.T) {
	sa, sb := twoStores(t)
	stall, entered := make(chan struct{}), make(chan struct{}, 1)
	a := newTestServer(t, func(c *Config) { c.Checkpointer, c.Graphs = sa, []Graph{stallGraph(t, stall, entered)} })
	th := a.newThread("alice", nil)
	var run RunView
	a.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{}, 202).json(t, &run)
	<-entered
	probed := &probedStore{Store: sb, thread: th.ThreadID, before: func() {
		// The run ends in a's process while b is between its reads and
		// its probe.
		close(stall)
		if v := a.wait("alice", run); v.Status != "done" {
			t.Errorf("a's run: %+v, want done", v)
		}
	}}
	open := make(chan struct{})
	close(open)
	b := newTestServer(t, func(c *Config) { c.Checkpointer, c.Graphs = probed, []Graph{stallGraph(t, open, nil)} })
	var got RunView
	b.must("alice", "GET", "/threads/"+th.ThreadID+"/runs/"+run.RunID, nil, 200).json(t, &got)
	if got.Ended != nil && got.Status != "done" {
		t.Errorf("b reads a's run %+v; want done (the thread's outcome) or still running, not %s", got, got.Status)
	}
}

// gatedGraph runs one node, which waits for gate, then ends the run done,
// or in error when the run's input sets fail.
func gatedGraph(t testing.TB, gate <-chan struct{}, entered chan<- struct{}) Graph {
	t.Helper()
	g, err := runtime.NewBuilder("gated").
		Channel("fail", "").
		TypedNode("step", "step", nil, func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			if entered != nil {
				select {
				case entered <- struct{}{}:
				default:
				}
			}
			<-gate
			if fail, _ := s["fail"].(bool); fail {
				return nil, errors.New("the later run failed")
			}
			return runtime.Values{}, nil
		}).
		Edge("__start__", "step").
		Edge("step", "__end__").
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return Of(g)
}

// TestLostEndLaterRunBetweenReads: server b reads a run of server a
// (another process on the same SQLite file) that has no run_end in the
// event log yet; between b's first read of the thread's record and its
// probe of the thread's lease, the run ends done and a later run of the
// thread starts and ends in error. b finds the lease free and reads the
// record again: its outcome is the later run's, recorded after the run
// began. b must not lend it to the earlier run. Before, b checked for a
// later run only in the record read before the probe, and read the
// earlier run ended in error, with the later run's error.
func TestLostEndLaterRunBetweenReads(t *testing.T) {
	sa, sb := twoStores(t)
	gate, entered := make(chan struct{}, 2), make(chan struct{}, 1)
	a := newTestServer(t, func(c *Config) { c.Checkpointer, c.Graphs = sa, []Graph{gatedGraph(t, gate, entered)} })
	th := a.newThread("alice", nil)
	runs := "/threads/" + th.ThreadID + "/runs"
	var first RunView
	a.must("alice", "POST", runs, map[string]any{}, 202).json(t, &first)
	<-entered
	var later RunView
	probed := &probedStore{Store: sb, thread: th.ThreadID, before: func() {
		// In a's process, while b is between its first read and its
		// probe: the first run ends done, a later one runs and fails.
		gate <- struct{}{}
		if v := a.wait("alice", first); v.Status != "done" {
			t.Errorf("a's first run: %+v, want done", v)
		}
		a.must("alice", "POST", runs, map[string]any{"input": map[string]any{"fail": true}}, 202).json(t, &later)
		gate <- struct{}{}
		if v := a.wait("alice", later); v.Status != "error" {
			t.Errorf("a's later run: %+v, want error", v)
		}
	}}
	open := make(chan struct{})
	close(open)
	b := newTestServer(t, func(c *Config) { c.Checkpointer, c.Graphs = probed, []Graph{gatedGraph(t, open, nil)} })
	var got RunView
	b.must("alice", "GET", runs+"/"+first.RunID, nil, 200).json(t, &got)
	if later.RunID == "" {
		t.Fatal("b never probed the thread's lease")
	}
	if got.Ended == nil || got.Status != "aborted" || !strings.Contains(got.Error, "a later run took the thread") {
		t.Errorf("b reads a's first run %+v; want aborted (a later run took the thread), not the later run's outcome", got)
	}
}

// twoStores opens one new SQLite file twice, as two processes would,
// closing both when the test ends.
func twoStores(t *testing.T) (a, b *sqlite.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shared.db")
	for _, s := range []**sqlite.Store{&a, &b} {
		var err error
		if *s, err = sqlite.Open(path); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*s).Close() })
	}
	return a, b
}
