package server

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

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
	path := filepath.Join(t.TempDir(), "probe.db")
	sa, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	sb, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
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
