package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestThreadStatus: a thread's view gives the runtime's rule
// (checkpoint.ThreadStatus, tested row by row in its package) its facts:
// the latest checkpoint, the interrupts open there, how the last run ended
// and whether a run holds the thread.
func TestThreadStatus(t *testing.T) {
	open := []PendingView{{PendingInterrupt: runtime.PendingInterrupt{ID: "review:interrupt#0"}}}
	nap := []PendingView{{PendingInterrupt: runtime.PendingInterrupt{ID: "wait:sleep#0", Timer: true}}}
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	ended := func(s runtime.Status, when time.Time) checkpoint.ThreadOutcome {
		return checkpoint.ThreadOutcome{Status: s, Ended: when}
	}
	cases := []struct {
		name  string
		view  ThreadView
		ended checkpoint.ThreadOutcome
		held  bool
		want  runtime.Status
	}{
		{"never ran", ThreadView{}, checkpoint.ThreadOutcome{}, false, runtime.StatusNew},
		{"a run holds it", ThreadView{CheckpointID: "c", Pending: open}, ended(runtime.StatusInterrupted, at), true, runtime.StatusRunning},
		{"waiting on a person", ThreadView{CheckpointID: "c", Pending: open}, ended(runtime.StatusInterrupted, at), false, runtime.StatusInterrupted},
		{"waiting, outcome unknown", ThreadView{CheckpointID: "c", Pending: open}, checkpoint.ThreadOutcome{}, false, runtime.StatusInterrupted},
		{"on a timer", ThreadView{CheckpointID: "c", Next: []string{"wait"}, Pending: nap}, ended(runtime.StatusParked, at), false, runtime.StatusParked},
		{"on a timer whose wake failed", ThreadView{CheckpointID: "c", Next: []string{"wait"}, Pending: nap}, ended(runtime.StatusError, at.Add(time.Second)), false, runtime.StatusError},
		{"done", ThreadView{CheckpointID: "c"}, ended(runtime.StatusDone, at), false, runtime.StatusDone},
		{"done, outcome unknown", ThreadView{CheckpointID: "c"}, checkpoint.ThreadOutcome{}, false, runtime.StatusDone},
		{"failed", ThreadView{CheckpointID: "c", Next: []string{"n"}}, ended(runtime.StatusError, at.Add(time.Second)), false, runtime.StatusError},
		{"failed, run of this server still ending", ThreadView{CheckpointID: "c", Next: []string{"n"}}, checkpoint.ThreadOutcome{Status: runtime.StatusError}, false, runtime.StatusError},
		{"aborted", ThreadView{CheckpointID: "c", Next: []string{"n"}}, ended(runtime.StatusAborted, at.Add(time.Second)), false, runtime.StatusAborted},
		{"parked by the runtime", ThreadView{CheckpointID: "c", Next: []string{"n"}}, ended(runtime.StatusParked, at), false, runtime.StatusParked},
		{"work left, no run going", ThreadView{CheckpointID: "c", Next: []string{"n"}}, checkpoint.ThreadOutcome{}, false, runtime.StatusParked},
		{"work left after an earlier run failed", ThreadView{CheckpointID: "c", Next: []string{"n"}}, ended(runtime.StatusError, at.Add(-time.Second)), false, runtime.StatusParked},
		{"answered since by a fork", ThreadView{CheckpointID: "c"}, ended(runtime.StatusInterrupted, at.Add(-time.Second)), false, runtime.StatusDone},
	}
	for _, c := range cases {
		if got := threadStatus(c.view, at, c.ended, c.held); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestNoStaleRunning: a run that has sent its run_end no longer makes its
// thread busy, though it has not freed the thread yet: a client that saw
// the end reads the thread as not running, and its next request (double
// texting reject) is taken, to start once the thread is freed.
func TestNoStaleRunning(t *testing.T) {
	s, err := New(Config{Graphs: []Graph{Of(approvalGraph(t))}, Checkpointer: checkpoint.NewMemory(), Authenticate: Anonymous})
	if err != nil {
		t.Fatal(err)
	}
	active := newRun("r1", "t", "approval", "run", 10)
	s.queues["t"] = &threadRuns{active: active}
	for _, c := range []struct {
		end  runtime.Status
		busy bool
	}{{"", true}, {runtime.StatusDone, false}} {
		active.mu.Lock()
		active.endSeen = c.end
		active.mu.Unlock()
		if _, busy := s.threadBusy("t"); busy != c.busy {
			t.Errorf("run_end %q: busy %v, want %v", c.end, busy, c.busy)
		}
	}
	next := newRun("r2", "t", "approval", "run", 10)
	now, err := s.submit(next, runtime.DoubleTextReject)
	if err != nil || !now {
		t.Fatalf("a request after the run_end: starts %v, %v; want taken", now, err)
	}
	if q := s.queues["t"]; len(q.queue) != 1 || q.queue[0] != next || q.active != active {
		t.Fatalf("the request does not wait for the thread to be freed: %+v", q)
	}
}

// TestAsksPerson: GET /threads?pending=true lists the threads a question
// to a person waits on, not those parked on timers only.
func TestAsksPerson(t *testing.T) {
	ask := PendingView{PendingInterrupt: runtime.PendingInterrupt{ID: "review:interrupt#0"}}
	nap := PendingView{PendingInterrupt: runtime.PendingInterrupt{ID: "wait:sleep#0", Timer: true}}
	for _, c := range []struct {
		name    string
		pending []PendingView
		want    bool
	}{{"none", nil, false}, {"a timer", []PendingView{nap}, false}, {"a question", []PendingView{ask}, true}, {"both", []PendingView{nap, ask}, true}} {
		if got := asksPerson(c.pending); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestFailedWakeReadsFailed: a thread whose wake ran and failed reads
// error, in the thread's view and in a listing by status, as the store's
// record and the waker have it; its due timer is still in the checkpoint
// the wake replays. Before, rule 2 put the open timer first: the server
// showed it parked, with a wake time in the past that no waker would act
// on.
func TestFailedWakeReadsFailed(t *testing.T) {
	g, err := runtime.NewBuilder("faller").Channel("log", spec.Append).
		Node("nap", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(c, "nap", 100*time.Millisecond); err != nil {
				return nil, err
			}
			return nil, errors.New("the report is not there")
		}).Edge(spec.Start, "nap").Compile(runtime.WithParkAfter(0))
	if err != nil {
		t.Fatal(err)
	}
	cp := checkpoint.NewMemory()
	ts := newTestServer(t, func(c *Config) { c.Graphs, c.Checkpointer = []Graph{Of(g)}, cp })
	th := ts.newThread("alice", nil)
	var run RunView
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{}, 202).json(t, &run)
	if run = ts.wait("alice", run); run.Status != runtime.StatusParked {
		t.Fatalf("run: %+v", run)
	}
	time.Sleep(110 * time.Millisecond)
	if res, _ := g.Thread(cp, th.ThreadID).Wake(context.Background()); res.Status != runtime.StatusError {
		t.Fatalf("the wake ended %q, want error", res.Status)
	}
	var got ThreadView
	ts.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
	if got.Status != runtime.StatusError {
		t.Errorf("the thread reads %s, want error", got.Status)
	}
	for status, want := range map[runtime.Status]int{runtime.StatusError: 1, runtime.StatusParked: 0} {
		var list ThreadList
		ts.must("alice", "GET", "/threads?status="+string(status), nil, 200).json(t, &list)
		if len(list.Threads) != want {
			t.Errorf("status=%s lists %d threads, want %d", status, len(list.Threads), want)
		}
	}
}
