package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/spec"
)

// steps is a two-node graph whose second node fails when the state says
// so: a run that fails there leaves a checkpoint that plans it.
func steps(t *testing.T) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("steps").Channel("fail", "").Channel("log", spec.Append).
		Node("a", func(c *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			return runtime.Values{"log": "a"}, nil
		}).
		Node("b", func(c *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			if fail, _ := s["fail"].(bool); fail {
				return nil, errors.New("b failed")
			}
			return runtime.Values{"log": "b"}, nil
		}).
		Edge(spec.Start, "a").Edge("a", "b").Edge("b", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestServerAndCommandAgreeOnStatus: the server and ilmek show the same
// status for the same thread, the runtime's (checkpoint.ThreadStatus). A
// run whose process died mid-run leaves a checkpoint planning tasks and no
// outcome of its own: the thread's record keeps the outcome of the run
// before it (done here), or none. Both tools say parked, and list it under
// parked; the command used to show the stale outcome, or new.
func TestServerAndCommandAgreeOnStatus(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "app.db")
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := steps(t)
	srv, err := server.New(server.Config{Graphs: []server.Graph{server.Of(g)}, Checkpointer: st, Authenticate: server.Anonymous})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(ctx)
	call := func(method, path, body string, want int, v any) {
		t.Helper()
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
		if w.Code != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, w.Code, want, w.Body)
		}
		if v != nil {
			if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
				t.Fatalf("%s %s: %v: %s", method, path, err, w.Body)
			}
		}
	}
	outcome := func(id string) checkpoint.ThreadOutcome {
		t.Helper()
		p, err := st.ListThreads(ctx, checkpoint.ThreadQuery{Limit: checkpoint.MaxThreadLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range p.Threads {
			if th.ID == id {
				return th.Outcome
			}
		}
		t.Fatalf("thread %s is not listed", id)
		return checkpoint.ThreadOutcome{}
	}
	// crash runs thread id so that its last run dies after a superstep:
	// the run fails in b, and its outcome is put back to what it was
	// before, as if its process had died before writing one.
	crash := func(id string, done bool) {
		t.Helper()
		call("POST", "/threads", `{"graph":"steps","thread_id":"`+id+`"}`, http.StatusCreated, nil)
		th := g.Thread(st, id)
		if done {
			if res, err := th.Invoke(ctx, runtime.Values{"fail": false}); err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("%s: first run %s, %v", id, res.Status, err)
			}
		}
		before := outcome(id)
		if res, _ := th.Invoke(ctx, runtime.Values{"fail": true}); res.Status != runtime.StatusError {
			t.Fatalf("%s: the run that fails ended %s", id, res.Status)
		}
		if err := st.RecordThread(ctx, id, checkpoint.ThreadWrite{Outcome: &before}); err != nil {
			t.Fatal(err)
		}
		ts, err := th.State(ctx)
		if err != nil || len(ts.Next) != 1 || ts.Next[0] != "b" {
			t.Fatalf("%s: the latest checkpoint plans %v (%v), want b", id, ts.Next, err)
		}
	}
	crash("after-done", true)
	crash("first-run", false)
	if o := outcome("after-done"); o.Status != runtime.StatusDone {
		t.Fatalf("after-done: outcome %s, want the first run's done", o.Status)
	}
	if o := outcome("first-run"); o.Status != "" {
		t.Fatalf("first-run: outcome %s, want none", o.Status)
	}
	var list struct {
		Threads []server.ThreadView `json:"threads"`
	}
	call("GET", "/threads?status=parked", "", http.StatusOK, &list)
	serverParked := map[string]bool{}
	for _, v := range list.Threads {
		serverParked[v.ThreadID] = true
	}
	code, out, errs := ilmek("--store", db, "--json", "threads", "--status", "parked")
	if code != 0 {
		t.Fatalf("threads: exit %d: %s", code, errs)
	}
	var page threadsPage
	mustDecode(t, []byte(out), &page)
	cliParked := map[string]bool{}
	for _, v := range page.Threads {
		cliParked[v.ID] = true
	}
	for _, id := range []string{"after-done", "first-run"} {
		var sv server.ThreadView
		call("GET", "/threads/"+id, "", http.StatusOK, &sv)
		code, out, errs := ilmek("--store", db, "--json", "show", id)
		if code != 0 {
			t.Fatalf("show %s: exit %d: %s", id, code, errs)
		}
		var cv showView
		mustDecode(t, []byte(out), &cv)
		if sv.Status != cv.Status || sv.Status != runtime.StatusParked {
			t.Errorf("%s: the server says %s, ilmek show says %s; want both parked", id, sv.Status, cv.Status)
		}
		if !serverParked[id] || !cliParked[id] {
			t.Errorf("%s: listed as parked by the server %v, by ilmek threads %v; want both", id, serverParked[id], cliParked[id])
		}
	}
}
