package server

import (
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestThreadStatus: a thread's status is the runtime's word, from its
// latest checkpoint and how its last run ended.
func TestThreadStatus(t *testing.T) {
	open := []PendingView{{PendingInterrupt: runtime.PendingInterrupt{ID: "review:interrupt#0"}}}
	cases := []struct {
		name  string
		view  ThreadView
		ended runtime.Status
		want  runtime.Status
	}{
		{"never ran", ThreadView{}, "", runtime.StatusNew},
		{"waiting on a person", ThreadView{CheckpointID: "c", Pending: open}, runtime.StatusInterrupted, runtime.StatusInterrupted},
		{"waiting, outcome unknown", ThreadView{CheckpointID: "c", Pending: open}, "", runtime.StatusInterrupted},
		{"done", ThreadView{CheckpointID: "c"}, runtime.StatusDone, runtime.StatusDone},
		{"done, outcome unknown", ThreadView{CheckpointID: "c"}, "", runtime.StatusDone},
		{"failed", ThreadView{CheckpointID: "c", Next: []string{"n"}}, runtime.StatusError, runtime.StatusError},
		{"aborted", ThreadView{CheckpointID: "c", Next: []string{"n"}}, runtime.StatusAborted, runtime.StatusAborted},
		{"parked by the runtime", ThreadView{CheckpointID: "c", Next: []string{"n"}}, runtime.StatusParked, runtime.StatusParked},
		{"work left, no run going", ThreadView{CheckpointID: "c", Next: []string{"n"}}, "", runtime.StatusParked},
		{"answered since by a fork", ThreadView{CheckpointID: "c"}, runtime.StatusInterrupted, runtime.StatusDone},
	}
	for _, c := range cases {
		if got := threadStatus(c.view, c.ended); got != c.want {
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
