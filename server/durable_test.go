package server

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// countingStore is a store that counts the appends to its event log.
type countingStore struct {
	*checkpoint.Memory
	appends atomic.Int64
}

func (c *countingStore) AppendEvents(ctx context.Context, evs []checkpoint.StoredEvent) error {
	c.appends.Add(1)
	return c.Memory.AppendEvents(ctx, evs)
}

// TestStreamFromDurableLog: a run's events reach the durable log once per
// superstep, and another server process (sharing the checkpointer) streams
// them to a client that reconnects there with Last-Event-ID.
func TestStreamFromDurableLog(t *testing.T) {
	durable := &countingStore{Memory: checkpoint.NewMemory()}
	store := durable
	a := newTestServer(t, func(c *Config) { c.Checkpointer = store })
	th := a.newThread("alice", nil)
	var run RunView
	a.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "x"}}, 202).json(t, &run)
	run = a.wait("alice", run)
	a.must("alice", "POST", "/threads/"+th.ThreadID+"/resume", map[string]any{"answers": map[string]any{run.Pending[0].ID: map[string]any{"approved": true}}}, 202).json(t, &run)
	run = a.wait("alice", run)
	if run.Status != "done" {
		t.Fatalf("run: %+v", run)
	}
	stored, _ := durable.ReadEvents(context.Background(), run.RunID, 0, 0)
	if int64(len(stored)) != run.LastSeq || durable.appends.Load() >= int64(len(stored))*2 {
		t.Fatalf("durable log: %d events of %d in %d appends (both runs)", len(stored), run.LastSeq, durable.appends.Load())
	}

	// Another process: it finds the thread in the store's records, but
	// does not know the run.
	b := newTestServer(t, func(c *Config) { c.Checkpointer = store })
	path := "/threads/" + th.ThreadID + "/runs/" + run.RunID + "/stream"
	res := b.stream(t, "alice", path, run.RunID+":3")
	rest := readSSE(t, res.Body, -1)
	res.Body.Close()
	if int64(len(rest)) != run.LastSeq-3 || rest[0].ID != run.RunID+":4" || rest[len(rest)-1].Event != "run_end" {
		t.Fatalf("reconnected elsewhere: %d events %+v", len(rest), rest)
	}
	if !strings.Contains(rest[len(rest)-1].Data, `"status":"done"`) {
		t.Fatalf("end: %+v", rest[len(rest)-1])
	}
	b.must("alice", "GET", "/threads/"+th.ThreadID+"/runs/nope/stream", nil, 404)
	b.must("bob", "GET", path, nil, 404)
}

// TestSecondServerOnOneStore: a server started on the store another
// server wrote (another process, or the same after a restart) finds its
// threads through the store's thread records, lists them, and streams a
// run's events from the store's event log.
func TestSecondServerOnOneStore(t *testing.T) {
	store := checkpoint.NewMemory()
	a := newTestServer(t, func(c *Config) { c.Checkpointer = store })
	th := a.newThread("alice", map[string]any{"metadata": map[string]string{"team": "blog"}})
	var run RunView
	a.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "x"}}, 202).json(t, &run)
	run = a.wait("alice", run)

	b := newTestServer(t, func(c *Config) { c.Checkpointer = store })
	var got ThreadView
	b.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
	if got.Graph != "approval" || got.Metadata["team"] != "blog" || got.Metadata["owner"] != "alice" || len(got.Pending) != 1 || !got.Created.Equal(th.Created) {
		t.Fatalf("thread on the second server: %+v", got)
	}
	if _, ok := got.Metadata[metaGraph]; ok {
		t.Fatalf("server keys leak into metadata: %+v", got.Metadata)
	}
	b.must("bob", "GET", "/threads/"+th.ThreadID, nil, 404)
	var list ThreadList
	b.must("alice", "GET", "/threads?pending=true&metadata.team=blog", nil, 200).json(t, &list)
	if len(list.Threads) != 1 || list.Threads[0].ThreadID != th.ThreadID {
		t.Fatalf("list on the second server: %+v", list)
	}
	res := b.stream(t, "alice", "/threads/"+th.ThreadID+"/runs/"+run.RunID+"/stream", "")
	evs := readSSE(t, res.Body, -1)
	res.Body.Close()
	if int64(len(evs)) != run.LastSeq || evs[len(evs)-1].Event != "run_end" {
		t.Fatalf("events on the second server: %d of %d", len(evs), run.LastSeq)
	}
	// The second server answers the pause; the thread is one thread.
	b.must("alice", "POST", "/threads/"+th.ThreadID+"/resume", map[string]any{"answers": map[string]any{run.Pending[0].ID: map[string]any{"approved": true}}}, 202).json(t, &run)
	if run = b.wait("alice", run); run.Status != "done" {
		t.Fatalf("resume on the second server: %+v", run)
	}
	a.must("alice", "POST", "/threads", map[string]any{"metadata": map[string]string{metaGraph: "x"}}, 400)
	a.must("alice", "POST", "/threads", map[string]any{"thread_id": th.ThreadID}, 409)
}

// TestRunsAfterRestart: a server started on the store another wrote finds
// that server's runs from what the store keeps: GET .../runs lists them,
// a run's lookup and /wait answer with how it ended, and the thread's
// status is the runtime's, never a stale "running".
func TestRunsAfterRestart(t *testing.T) {
	store := checkpoint.NewMemory()
	a := newTestServer(t, func(c *Config) { c.Checkpointer = store })
	th := a.newThread("alice", nil)
	var first, second RunView
	a.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "x"}}, 202).json(t, &first)
	first = a.wait("alice", first)
	a.must("alice", "POST", "/threads/"+th.ThreadID+"/resume", map[string]any{"answers": map[string]any{first.Pending[0].ID: map[string]any{"approved": true}}}, 202).json(t, &second)
	second = a.wait("alice", second)

	b := newTestServer(t, func(c *Config) { c.Checkpointer = store })
	base := "/threads/" + th.ThreadID + "/runs/"
	cases := []struct {
		run    RunView
		status string
		kind   string
	}{{first, "interrupted", "run"}, {second, "done", "resume"}}
	for _, c := range cases {
		for _, path := range []string{base + c.run.RunID, base + c.run.RunID + "/wait?timeout=1s"} {
			var got RunView
			b.must("alice", "GET", path, nil, 200).json(t, &got)
			if string(got.Status) != c.status || got.Kind != c.kind || got.LastSeq != c.run.LastSeq || got.Ended == nil {
				t.Errorf("%s after the restart: %+v, want %s %s ended", path, got, c.kind, c.status)
			}
		}
	}
	b.must("alice", "POST", base+second.RunID+"/cancel", nil, 202)
	var list RunList
	b.must("alice", "GET", "/threads/"+th.ThreadID+"/runs", nil, 200).json(t, &list)
	if len(list.Runs) != 2 || list.Runs[0].RunID != second.RunID || list.Runs[1].RunID != first.RunID {
		t.Fatalf("runs after the restart: %+v", list)
	}
	var got ThreadView
	b.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
	if got.Status != "done" || got.LastRunID != second.RunID {
		t.Fatalf("thread after the restart: %s, last run %s", got.Status, got.LastRunID)
	}
}

// TestDeadRunAfterRestart: a run whose process died before its run_end
// reads as running only while another process holds the thread's lease;
// once no run holds it (a lease never taken, released or expired), or a
// later run took the thread, the run reads ended aborted, with what to do,
// everywhere: its lookup, /wait, cancel, its stream and its thread.
func TestDeadRunAfterRestart(t *testing.T) {
	for _, c := range []struct {
		name    string
		held    bool // another process holds the thread's lease
		later   bool // a later run took the thread
		errText string
	}{
		{name: "lease held elsewhere", held: true},
		{name: "no lease", errText: "continue the thread with POST /threads/"},
		{name: "lease released", held: true, errText: "continue the thread with POST /threads/"},
		{name: "later run", later: true, errText: "a later run took the thread"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := checkpoint.NewMemory()
			a := newTestServer(t, func(c *Config) { c.Checkpointer = store })
			th := a.newThread("alice", nil)
			ctx := context.Background()
			if err := store.AppendEvents(ctx, []checkpoint.StoredEvent{{RunID: "dead", Seq: 1, ThreadID: th.ThreadID, Time: time.Now().UTC(), Kind: "run_start", Data: []byte(`{"type":"run_start"}`)}}); err != nil {
				t.Fatal(err)
			}
			a.noteRun(ctx, th.ThreadID, "dead", "run")
			var lease checkpoint.Lease
			if c.held {
				var err error
				if lease, err = store.Lease(ctx, th.ThreadID, checkpoint.LeaseOptions{}); err != nil {
					t.Fatal(err)
				}
				defer lease.Release()
			}
			b := newTestServer(t, func(c *Config) { c.Checkpointer = store })
			path := "/threads/" + th.ThreadID + "/runs/dead"
			var got RunView
			var thread ThreadView
			if c.held {
				b.must("alice", "GET", path, nil, 200).json(t, &got)
				if got.Status != "running" || got.Ended != nil {
					t.Fatalf("the last run without its end, its lease held: %+v", got)
				}
				b.must("alice", "GET", path+"/wait?timeout=300ms", nil, 202)
				if p := b.must("alice", "POST", path+"/cancel", nil, 409).problem(t); p.Type != ProblemTypePrefix+"run-elsewhere" {
					t.Fatalf("cancel with the lease held: %+v", p)
				}
				if b.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &thread); thread.Status != "running" {
					t.Fatalf("thread with the lease held: %s", thread.Status)
				}
				if c.errText == "" {
					return
				}
				lease.Release()
				time.Sleep(leaseRetry) // a lease found held is not tried again before
			}
			if c.later {
				var run RunView
				b.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "x"}}, 202).json(t, &run)
				b.wait("alice", run)
			}
			b.must("alice", "GET", path, nil, 200).json(t, &got)
			if got.Status != "aborted" || got.Ended == nil || !strings.Contains(got.Error, c.errText) {
				t.Fatalf("the run without its end: %+v, want aborted with %q", got, c.errText)
			}
			var waited, cancelled RunView
			b.must("alice", "GET", path+"/wait?timeout=5s", nil, 200).json(t, &waited)
			b.must("alice", "POST", path+"/cancel", nil, 202).json(t, &cancelled)
			for _, v := range []RunView{waited, cancelled} {
				if v.Status != "aborted" || v.Ended == nil || !v.Ended.Equal(*got.Ended) || v.Error != got.Error {
					t.Errorf("wait or cancel: %+v, want %+v", v, got)
				}
			}
			res := b.stream(t, "alice", path+"/stream", "")
			evs := readSSEWithin(t, res, 10*time.Second)
			if len(evs) != 2 || evs[1].Event != "run_end" || evs[1].ID != "dead:2" || !strings.Contains(evs[1].Data, `"status":"aborted"`) || !strings.Contains(evs[1].Data, c.errText) {
				t.Errorf("stream: %+v", evs)
			}
			// A client that saw events the dead process streamed and never
			// stored reconnects past the stored log: the end's id passes
			// its own, never reusing one it saw.
			evs = readSSEWithin(t, b.stream(t, "alice", path+"/stream", "dead:5"), 10*time.Second)
			if len(evs) != 1 || evs[0].Event != "run_end" || evs[0].ID != "dead:6" {
				t.Errorf("stream after dead:5: %+v, want its run_end as dead:6", evs)
			}
			b.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &thread)
			if want := map[bool]runtime.Status{false: "new", true: "interrupted"}[c.later]; thread.Status != want {
				t.Errorf("thread: %s, want %s", thread.Status, want)
			}
		})
	}
}

// TestRunInAnotherProcess: a run going on in another process (a second
// server on the same store, which holds the thread's lease) reads as
// running on this one, in the thread, the list filtered to running
// threads and the thread's runs; its cancel here is refused with a
// problem that says where to cancel it; once it ended there, this server
// says how.
func TestRunInAnotherProcess(t *testing.T) {
	gate := make(chan struct{})
	store := checkpoint.NewMemory()
	slow := func(c *Config) { c.Checkpointer, c.Graphs = store, []Graph{Of(slowGraph(t, gate))} }
	a, b := newTestServer(t, slow), newTestServer(t, slow)
	th := a.newThread("alice", nil)
	var run RunView
	a.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"tag": "x"}}, 202).json(t, &run)

	// The other server learns of the run from the store, where the run's
	// process writes its events at each checkpoint: the first one comes
	// once the run has begun.
	var got ThreadView
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
		if got.Status == "running" || time.Now().After(deadline) {
			break
		}
	}
	if got.Status != "running" || got.LastRunID != run.RunID {
		t.Fatalf("the thread on the other server: %s, last run %q; want running, %s", got.Status, got.LastRunID, run.RunID)
	}
	var list ThreadList
	b.must("alice", "GET", "/threads?status=running", nil, 200).json(t, &list)
	if len(list.Threads) != 1 || list.Threads[0].ThreadID != th.ThreadID {
		t.Errorf("running threads on the other server: %+v", list.Threads)
	}
	var runs RunList
	b.must("alice", "GET", "/threads/"+th.ThreadID+"/runs", nil, 200).json(t, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].Status != "running" {
		t.Errorf("runs on the other server: %+v", runs.Runs)
	}
	r := b.must("alice", "POST", "/threads/"+th.ThreadID+"/runs/"+run.RunID+"/cancel", nil, 409)
	checkProblemLength(t, r)
	if p := r.problem(t); p.Type != ProblemTypePrefix+"run-elsewhere" || !strings.Contains(p.Detail, "another process") || !strings.Contains(p.Detail, "cancel it through that process") {
		t.Errorf("the refused cancel: %+v", p)
	}

	a.must("alice", "POST", "/threads/"+th.ThreadID+"/runs/"+run.RunID+"/cancel", nil, 202)
	gate <- struct{}{}
	if run = a.wait("alice", run); run.Status != "aborted" {
		t.Fatalf("the run after its own server's cancel: %+v", run)
	}
	b.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
	if got.Status != "aborted" {
		t.Errorf("the thread on the other server after the run ended: %s", got.Status)
	}
	b.must("alice", "POST", "/threads/"+th.ThreadID+"/runs/"+run.RunID+"/cancel", nil, 202)
}
