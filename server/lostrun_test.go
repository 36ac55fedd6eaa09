package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// readSSEWithin reads a stream's events until it ends, failing the test
// when it does not end within d.
func readSSEWithin(t *testing.T, res *http.Response, d time.Duration) []sseEvent {
	t.Helper()
	defer res.Body.Close()
	timer := time.AfterFunc(d, func() { res.Body.Close() })
	evs := readSSE(t, res.Body, -1)
	if !timer.Stop() {
		t.Errorf("the stream did not end within %v; read %+v", d, evs)
	}
	return evs
}

// stallGraph loops a node three times, as slowGraph, whose node waits for
// gate and not for its context: a run that lost its thread's lease goes
// on until gate lets it (a process stalled past its lease's time to live),
// then ends. entered, when not nil, hears of each node started.
func stallGraph(t testing.TB, gate <-chan struct{}, entered chan<- struct{}) Graph {
	t.Helper()
	g, err := runtime.NewBuilder("stall").
		Channel("n", "").
		TypedNode("tick", "tick", nil, func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			if entered != nil {
				select {
				case entered <- struct{}{}:
				default:
				}
			}
			<-gate
			n, _ := s["n"].(float64)
			return runtime.Values{"n": n + 1}, nil
		}).
		Edge("__start__", "tick").
		EdgeWhen("tick", "tick", spec.Lt("n", 3)).
		EdgeWhen("tick", "__end__", spec.Gt("n", 2.5)).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return Of(g)
}

// leaseRows opens the SQLite file at path beside its stores, to write its
// lease rows as a process that crashed or runs elsewhere left them.
func leaseRows(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestCrashedRunOnSQLite: a server's process ends mid-run (its store
// writes nothing more, its lease is not renewed); a server restarted on
// the same file reads the run ended aborted, with what to do, once no run
// holds the thread's lease (none left, or expired), and as running while
// another live process holds it. The thread reads parked (its work left
// for the next run), cancel answers the ended run's view, /wait ends, the
// run's stream ends with a run_end, and POST .../runs {} continues the
// thread to its end.
func TestCrashedRunOnSQLite(t *testing.T) {
	for _, c := range []struct {
		name    string
		expires time.Duration // the lease row left: expires this far from now; 0: none
	}{
		{name: "no lease left"},
		{name: "lease expired", expires: -time.Second},
		{name: "lease held elsewhere", expires: time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "crash.db")
			crashed, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer crashed.Close()
			stuck, entered := make(chan struct{}), make(chan struct{}, 1)
			defer close(stuck)
			a := newTestServer(t, func(cfg *Config) {
				cfg.Checkpointer, cfg.Graphs = crashed, []Graph{stallGraph(t, stuck, entered)}
			})
			th := a.newThread("alice", nil)
			var run RunView
			a.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{}, 202).json(t, &run)
			<-entered
			stuck <- struct{}{} // the first superstep ends, the second stays in flight
			<-entered
			store, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				evs, err := store.ReadEvents(context.Background(), run.RunID, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(evs) > 0 && evs[len(evs)-1].Kind == "checkpoint" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the run's checkpoint event did not reach the store: %+v", evs)
				}
			}
			// The crash: the store of a's process writes nothing more and
			// drops its lease row; a row is left as the case says.
			crashed.Close()
			if c.expires != 0 {
				if _, err := leaseRows(t, path).Exec("INSERT INTO ilmek_leases (thread_id, owner, holder, expires_ns) VALUES (?, 'gone', 'pid 0', ?)",
					th.ThreadID, time.Now().Add(c.expires).UnixNano()); err != nil {
					t.Fatal(err)
				}
			}

			open := make(chan struct{})
			close(open)
			b := newTestServer(t, func(cfg *Config) { cfg.Checkpointer, cfg.Graphs = store, []Graph{stallGraph(t, open, nil)} })
			runPath := "/threads/" + th.ThreadID + "/runs/" + run.RunID
			var got RunView
			var thread ThreadView
			b.must("alice", "GET", runPath, nil, 200).json(t, &got)
			b.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &thread)
			if c.expires > 0 {
				if got.Status != "running" || got.Ended != nil || thread.Status != "running" {
					t.Fatalf("with the lease held elsewhere: run %+v, thread %s; want both running", got, thread.Status)
				}
				b.must("alice", "POST", runPath+"/cancel", nil, 409)
				return
			}
			want := "continue the thread with POST /threads/" + th.ThreadID + "/runs {}"
			if got.Status != "aborted" || got.Ended == nil || !strings.Contains(got.Error, want) {
				t.Fatalf("the crashed run: %+v, want aborted, %q", got, want)
			}
			if thread.Status != "parked" || thread.LastRunID != run.RunID {
				t.Errorf("the thread: %s, last run %s; want parked, %s", thread.Status, thread.LastRunID, run.RunID)
			}
			var cancelled, waited RunView
			b.must("alice", "POST", runPath+"/cancel", nil, 202).json(t, &cancelled)
			b.must("alice", "GET", runPath+"/wait?timeout=5s", nil, 200).json(t, &waited)
			for _, v := range []RunView{cancelled, waited} {
				if v.Status != "aborted" || v.Error != got.Error || v.Ended == nil {
					t.Errorf("cancel or wait: %+v, want %+v", v, got)
				}
			}
			evs := readSSEWithin(t, b.stream(t, "alice", runPath+"/stream", ""), 10*time.Second)
			if n := len(evs); n == 0 || evs[n-1].Event != "run_end" || evs[n-1].ID != fmt.Sprintf("%s:%d", run.RunID, got.LastSeq+1) ||
				!strings.Contains(evs[n-1].Data, `"status":"aborted"`) {
				t.Errorf("the crashed run's stream: %+v", evs)
			}

			var next RunView
			b.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{}, 202).json(t, &next)
			if next = b.wait("alice", next); next.Status != "done" {
				t.Fatalf("the continuing run: %+v", next)
			}
			b.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &thread)
			var values struct{ N float64 }
			if err := json.Unmarshal(thread.Values, &values); err != nil || thread.Status != "done" || values.N != 3 {
				t.Errorf("the thread continued: %s, values %s", thread.Status, thread.Values)
			}
		})
	}
}

// TestFencedRunAfterTakeover: server a's run stalls past its lease (its
// lease row is gone: another process took the thread over), server b
// continues the thread to done, then a's run wakes and is fenced. a
// reads the thread as the store does, done, with b's run last, not as
// its own fenced run ended.
func TestFencedRunAfterTakeover(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fence.db")
	sa, err := sqlite.Open(path, sqlite.LeaseTTL(90*time.Millisecond))
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
	open := make(chan struct{})
	close(open)
	b := newTestServer(t, func(c *Config) { c.Checkpointer, c.Graphs = sb, []Graph{stallGraph(t, open, nil)} })
	th := a.newThread("alice", nil)
	var stalled, next RunView
	a.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{}, 202).json(t, &stalled)
	<-entered
	// Its lease expired unrenewed and another process took it: the row
	// is gone, a's heartbeat finds it so.
	if _, err := leaseRows(t, path).Exec("DELETE FROM ilmek_leases WHERE thread_id = ?", th.ThreadID); err != nil {
		t.Fatal(err)
	}
	b.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{}, 202).json(t, &next)
	if next = b.wait("alice", next); next.Status != "done" {
		t.Fatalf("b's run: %+v", next)
	}
	close(stall)
	if stalled = a.wait("alice", stalled); stalled.Status != "error" || !strings.Contains(stalled.Error, "lease") {
		t.Fatalf("a's stalled run: %+v, want error, its lease lost", stalled)
	}
	for name, ts := range map[string]*testServer{"a": a, "b": b} {
		var v ThreadView
		ts.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &v)
		if v.Status != "done" || v.LastRunID != next.RunID {
			t.Errorf("the thread on %s: %s, last run %s; want done, %s (the store's)", name, v.Status, v.LastRunID, next.RunID)
		}
	}
}
