package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// leaseSeen records, after each checkpoint commit of a run, whether the
// thread's lease row was still in the file.
type leaseSeen struct {
	runtime.NopObserver
	t    *testing.T
	s    *Store
	held []bool
}

func (o *leaseSeen) CheckpointCommit(_ context.Context, _ runtime.RunRecord, _ runtime.CheckpointRecord) {
	o.held = append(o.held, rowCount(o.t, o.s, "SELECT count(*) FROM ilmek_leases WHERE thread_id = 'chat'") == 1)
}

// TestLastCommitReleasesTheLease: a run's last write gives the lease back
// in its transaction (checkpoint.Commit.Release), so a run writes one
// transaction less: the last checkpoint of a run that ends done (with the
// event log, its last events with it) or pauses, or, for a pause with the
// event log, the write of its last events. Every earlier commit keeps the
// lease, and the thread can be leased at once after the run.
func TestLastCommitReleasesTheLease(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "release.db"))
	ctx := t.Context()
	g := chatGraph(t) // pauses at its 10th message
	th := g.Thread(s, "chat")
	for turn := range 12 {
		obs := &leaseSeen{t: t, s: s}
		opts := []runtime.RunOption{runtime.WithObserver(obs)}
		logged := turn%4 == 3
		if logged {
			opts = append(opts, runtime.WithEventLog())
		}
		res, err := th.Invoke(ctx, runtime.Values{"messages": "hi"}, opts...)
		if err == nil && res.Status == runtime.StatusInterrupted {
			// The pause was the first run's last write.
			if want := []bool{true, false}; !logged && !slices.Equal(obs.held, want) {
				t.Errorf("turn %d, the run that paused: lease held after its commits %v, want %v", turn, obs.held, want)
			}
			obs.held = nil
			res, err = th.Resume(ctx, runtime.Answer("yes"), opts...)
		}
		if err != nil || res.Status != runtime.StatusDone {
			t.Fatalf("turn %d: %v %v", turn, res.Status, err)
		}
		// The input's checkpoint, the last one (with the run's last
		// events when the run keeps its event log).
		want := []bool{true, false}
		if len(obs.held) == 1 {
			want = want[1:] // a resume commits its superstep only
		}
		if !slices.Equal(obs.held, want) {
			t.Errorf("turn %d (event log %v): lease held after each commit %v, want %v", turn, logged, obs.held, want)
		}
		if n := rowCount(t, s, "SELECT count(*) FROM ilmek_leases"); n != 0 {
			t.Fatalf("turn %d: %d lease rows after the run", turn, n)
		}
		l, err := s.Lease(ctx, "chat", checkpoint.LeaseOptions{})
		if err != nil {
			t.Fatalf("turn %d: lease after the run: %v", turn, err)
		}
		l.Release()
	}
	st, err := th.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.State["messages"].([]any)); n != 24 {
		t.Fatalf("%d messages after 12 turns, want 24", n)
	}
	if n := rowCount(t, s, "SELECT count(*) FROM ilmek_events"); n == 0 {
		t.Fatal("no events stored by the runs with the event log")
	}
}
