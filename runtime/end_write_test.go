package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// commitLog is checkpoint.Memory whose leases record each commit and fail
// the run's last write of a checkpoint (Release with a checkpoint) once,
// when failEnd is set, before it writes anything.
type commitLog struct {
	*checkpoint.Memory
	failEnd bool

	mu      sync.Mutex
	commits []checkpoint.Commit // copies of what each commit carried: the checkpoint's id, the events' kinds
}

var errEndWrite = errors.New("the test failed the run's last write")

func (m *commitLog) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l, err := m.Memory.Lease(ctx, thread, opts)
	if err != nil {
		return nil, err
	}
	return &commitLogLease{Lease: l, m: m}, nil
}

type commitLogLease struct {
	checkpoint.Lease
	m *commitLog
}

func (l *commitLogLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	l.m.mu.Lock()
	rec := checkpoint.Commit{Release: c.Release, Events: slices.Clone(c.Events)}
	if c.Checkpoint != nil {
		rec.Checkpoint = &checkpoint.Checkpoint{ID: c.Checkpoint.ID}
	}
	l.m.commits = append(l.m.commits, rec)
	fail := l.m.failEnd && c.Release && c.Checkpoint != nil
	if fail {
		l.m.failEnd = false
	}
	l.m.mu.Unlock()
	if fail {
		return errEndWrite
	}
	return l.Lease.Commit(ctx, c)
}

// CommitBatch writes cs one after another: the leases write batches
// (checkpoint.BatchLease), so DurableWithNextWrite keeps checkpoints.
func (l *commitLogLease) CommitBatch(ctx context.Context, cs []checkpoint.Commit, j *checkpoint.JournalWrite) error {
	return commitEach(ctx, l, cs, j)
}

// kinds returns the kinds of events.
func kinds(evs []checkpoint.StoredEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

// TestLastCheckpointCarriesTheRunEnd: a run that keeps an event log
// writes the checkpoint that ends it done with its last events (state,
// checkpoint, run_end), its outcome and the lease's release, in one
// commit, and writes nothing after it; the consumer gets those events
// once that write returned, the same as stored. When that write fails,
// the run ends with its error: the consumer never sees the events it
// carried, and the run's last write stores the run's events without a
// gap, its run_end the error's.
func TestLastCheckpointCarriesTheRunEnd(t *testing.T) {
	g := logChain(t, "end", 3)
	for _, tc := range []struct {
		name    string
		failEnd bool
		opts    []runtime.RunOption
	}{
		{name: "done"},
		{name: "done with the next write", opts: []runtime.RunOption{runtime.WithDurability(runtime.DurableWithNextWrite)}},
		{name: "its last write fails", failEnd: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &commitLog{Memory: checkpoint.NewMemory(), failEnd: tc.failEnd}
			var live []runtime.Event
			var runErr error
			for ev, err := range g.Thread(m, "t").Stream(t.Context(), nil, append([]runtime.RunOption{runtime.WithEventLog()}, tc.opts...)...) {
				if err != nil {
					runErr = err
					break
				}
				live = append(live, ev)
			}
			if len(live) == 0 {
				t.Fatalf("no events (%v)", runErr)
			}
			end := live[len(live)-1]
			stored, err := m.ReadEvents(t.Context(), end.RunID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			// The consumer got what was stored, in the same order, Seq 1 on.
			if len(stored) != len(live) {
				t.Fatalf("%d events stored %v, %d handed over", len(stored), kinds(stored), len(live))
			}
			for i, e := range stored {
				var got struct {
					Status string `json:"status"`
				}
				if err := json.Unmarshal(e.Data, &got); err != nil {
					t.Fatal(err)
				}
				if e.Seq != int64(i+1) || e.Seq != live[i].Seq || e.Kind != string(live[i].Type) || got.Status != string(live[i].Status) {
					t.Errorf("event %d: stored %s seq %d status %q, handed over %s seq %d status %q",
						i, e.Kind, e.Seq, got.Status, live[i].Type, live[i].Seq, live[i].Status)
				}
			}
			m.mu.Lock()
			commits := m.commits
			m.mu.Unlock()
			last := commits[len(commits)-1]
			if tc.failEnd {
				if end.Type != runtime.EventRunEnd || end.Status != runtime.StatusError || !errors.Is(runErr, errEndWrite) && !errors.Is(end.Err, errEndWrite) {
					t.Errorf("run_end %+v (stream error %v), want the error of the failed write", end, runErr)
				}
				for _, ev := range live[len(live)-3:] {
					if ev.Type == runtime.EventCheckpoint || ev.Type == runtime.EventState {
						t.Errorf("the consumer got %s of the write that failed: %+v", ev.Type, ev)
					}
				}
				if last.Checkpoint != nil || !last.Release || kinds(last.Events)[len(last.Events)-1] != "run_end" {
					t.Errorf("the run's last write: checkpoint %v, release %v, events %v; want the events alone, run_end last", last.Checkpoint, last.Release, kinds(last.Events))
				}
				return
			}
			if end.Type != runtime.EventRunEnd || end.Status != runtime.StatusDone || runErr != nil {
				t.Fatalf("run_end %+v, err %v; want done", end, runErr)
			}
			ks := kinds(last.Events)
			if last.Checkpoint == nil || !last.Release || !slices.Equal(ks[max(0, len(ks)-3):], []string{"state", "checkpoint", "run_end"}) {
				t.Errorf("the run's last write: checkpoint %v, release %v, events %v; want the last checkpoint with state, checkpoint, run_end", last.Checkpoint, last.Release, ks)
			}
			page, err := m.ListThreads(t.Context(), checkpoint.ThreadQuery{})
			if err != nil || len(page.Threads) != 1 || page.Threads[0].Outcome.Status != runtime.StatusDone {
				t.Errorf("the thread's record: %+v %v, want done", page, err)
			}
		})
	}
}
