package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/graphviz"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

func TestNewRefusesWithoutAuthenticate(t *testing.T) {
	_, err := New(Config{Graphs: []Graph{Of(approvalGraph(t))}, Checkpointer: checkpoint.NewMemory()})
	if !errors.Is(err, ErrNoAuthenticate) {
		t.Fatalf("New without Authenticate: %v, want ErrNoAuthenticate", err)
	}
	for name, cfg := range map[string]Config{
		"no checkpointer": {Graphs: []Graph{Of(approvalGraph(t))}, Authenticate: Anonymous},
		"no graphs":       {Checkpointer: checkpoint.NewMemory(), Authenticate: Anonymous},
		"zero graph":      {Graphs: []Graph{{}}, Checkpointer: checkpoint.NewMemory(), Authenticate: Anonymous},
		"two same names":  {Graphs: []Graph{Of(approvalGraph(t)), Of(approvalGraph(t))}, Checkpointer: checkpoint.NewMemory(), Authenticate: Anonymous},
		"bad policy":      {Graphs: []Graph{Of(approvalGraph(t))}, Checkpointer: checkpoint.NewMemory(), Authenticate: Anonymous, DoubleTexting: "twice"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted the config", name)
		}
	}
}

// TestApprovalFlow walks a thread through every route: create, run to the
// pause, read it, answer wrongly and rightly, history, fork, diagram.
func TestApprovalFlow(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.must("alice", "GET", "/openapi.json", nil, 200)
	var graphs struct{ Graphs []GraphView }
	ts.must("alice", "GET", "/graphs", nil, 200).json(t, &graphs)
	if len(graphs.Graphs) != 1 || graphs.Graphs[0].Name != "approval" || len(graphs.Graphs[0].Versions) != 1 {
		t.Fatalf("graphs: %+v", graphs)
	}

	th := ts.newThread("alice", map[string]any{"graph": "approval", "metadata": map[string]string{"team": "blog"}})
	if th.Status != runtime.StatusNew || th.Metadata["owner"] != "alice" || th.Metadata["team"] != "blog" {
		t.Fatalf("new thread: %+v", th)
	}
	var run RunView
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "otters"}}, 202).json(t, &run)
	run = ts.wait("alice", run)
	if run.Status != "interrupted" || len(run.Pending) != 1 {
		t.Fatalf("run: %+v", run)
	}
	pi := run.Pending[0]
	if pi.Expects == nil || !strings.Contains(string(pi.Expects.Schema), `"approved"`) {
		t.Fatalf("pending interrupt records no schema: %+v", pi)
	}

	var got ThreadView
	ts.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
	if got.Status != runtime.StatusInterrupted || len(got.Pending) != 1 || got.LastRunID != run.RunID {
		t.Fatalf("thread: %+v", got)
	}
	var list ThreadList
	ts.must("alice", "GET", "/threads?pending=true&metadata.team=blog", nil, 200).json(t, &list)
	if len(list.Threads) != 1 || list.Threads[0].ThreadID != th.ThreadID {
		t.Fatalf("pending list: %+v", list)
	}
	ts.must("alice", "GET", "/threads?pending=false", nil, 200).json(t, &list)
	if len(list.Threads) != 0 {
		t.Fatalf("non-pending list: %+v", list)
	}

	// Refusals map to precise statuses and problem types.
	for _, c := range []struct {
		name   string
		body   any
		status int
		typ    string
	}{
		{"wrong type", map[string]any{"answers": map[string]any{pi.ID: "yes"}}, 422, "answer-type"},
		{"null answer", map[string]any{"answers": map[string]any{pi.ID: nil}}, 422, "answer-type"},
		{"misspelt member", map[string]any{"answers": map[string]any{pi.ID: map[string]any{"aproved": true}}}, 422, "answer-type"},
		{"unknown id", map[string]any{"answers": map[string]any{"nope:interrupt#0": true}}, 422, "unknown-interrupt"},
		{"empty", map[string]any{"answers": map[string]any{}}, 400, "bad-request"},
		{"bad policy", map[string]any{"answers": map[string]any{pi.ID: true}, "double_texting": "twice"}, 400, "bad-request"},
	} {
		p := ts.must("alice", "POST", "/threads/"+th.ThreadID+"/resume", c.body, c.status).problem(t)
		if p.Type != ProblemTypePrefix+c.typ || p.Status != c.status || p.Instance == "" {
			t.Errorf("%s: problem %+v, want type %s", c.name, p, c.typ)
		}
	}
	// Input to a thread that waits on a person.
	p := ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "x"}}, 409).problem(t)
	if p.Type != ProblemTypePrefix+"waiting-on-person" {
		t.Errorf("run on a waiting thread: %+v", p)
	}

	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/resume", map[string]any{"answers": map[string]any{pi.ID: map[string]any{"approved": true}}}, 202).json(t, &run)
	run = ts.wait("alice", run)
	if run.Status != "done" || run.Kind != "resume" {
		t.Fatalf("resumed run: %+v", run)
	}
	ts.must("alice", "GET", "/threads/"+th.ThreadID+"/runs/"+run.RunID, nil, 200)
	ts.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
	var values map[string]any
	_ = json.Unmarshal(got.Values, &values)
	if got.Status != runtime.StatusDone || values["decision"] != true || len(values["log"].([]any)) != 3 {
		t.Fatalf("finished thread: %+v", got)
	}
	p = ts.must("alice", "POST", "/threads/"+th.ThreadID+"/resume", map[string]any{"answers": map[string]any{pi.ID: true}}, 409).problem(t)
	if p.Type != ProblemTypePrefix+"not-interrupted" {
		t.Errorf("resume of a finished thread: %+v", p)
	}

	var hist struct{ Checkpoints []CheckpointView }
	ts.must("alice", "GET", "/threads/"+th.ThreadID+"/history", nil, 200).json(t, &hist)
	if len(hist.Checkpoints) < 4 {
		t.Fatalf("history: %d checkpoints", len(hist.Checkpoints))
	}
	// Fork from the checkpoint after "write": the branch asks again.
	var first CheckpointView
	for _, c := range hist.Checkpoints {
		if c.Step == 1 {
			first = c
		}
	}
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/history/"+first.CheckpointID+"/fork", nil, 202).json(t, &run)
	run = ts.wait("alice", run)
	if run.Status != "interrupted" || run.Kind != "fork" {
		t.Fatalf("fork: %+v", run)
	}
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/history/nope/fork", nil, 404)

	d := ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram", nil, 200)
	if !strings.HasPrefix(string(d.Body), "flowchart TD") || !strings.Contains(string(d.Body), "class review pending") {
		t.Fatalf("mermaid:\n%s", d.Body)
	}
	d = ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?format=dot", nil, 200)
	if !strings.Contains(string(d.Body), `"review" [label="review (waiting)", id="node_review", class="pending"`) {
		t.Fatalf("dot:\n%s", d.Body)
	}
	ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?format=png", nil, 400)
	ts.must("alice", "GET", "/threads/nope", nil, 404)
	ts.must("alice", "GET", "/threads/"+th.ThreadID+"/runs/nope", nil, 404)
}

// TestDiagramSVG: with a renderer (Config.RenderSVG) the diagram is SVG
// laid out by Graphviz; without one format=svg answers 501.
func TestDiagramSVG(t *testing.T) {
	without := newTestServer(t, nil)
	th := without.newThread("alice", nil)
	p := without.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?format=svg", nil, 501).problem(t)
	if p.Type != ProblemTypePrefix+"not-implemented" || !strings.Contains(p.Detail, "RenderSVG") {
		t.Fatalf("no renderer: %+v", p)
	}
	without.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?format=dot", nil, 200)

	ts := newTestServer(t, func(c *Config) { c.RenderSVG = graphviz.New().SVG })
	th = ts.newThread("alice", nil)
	var run RunView
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "a"}}, 202).json(t, &run)
	ts.wait("alice", run)
	d := ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?format=svg", nil, 200)
	for _, f := range []string{"svg", "dot", "mermaid"} {
		h := ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?format="+f, nil, 200).Header
		if h.Get("Content-Security-Policy") != inboxCSP || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("format %s: CSP %q, X-Content-Type-Options %q", f, h.Get("Content-Security-Policy"), h.Get("X-Content-Type-Options"))
		}
	}
	svg := string(d.Body)
	if !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, `id="node_review"`) || !strings.Contains(svg, `class="node pending"`) {
		t.Fatalf("svg:\n%s", svg)
	}
}

// sse reads Server-Sent Events from a response body.
type sseEvent struct{ ID, Event, Data string }

func readSSE(t *testing.T, body io.Reader, stopAfter int) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.ID != "" {
				out = append(out, cur)
				if len(out) == stopAfter {
					return out
				}
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.Event = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.Data = line[6:]
		}
	}
	return out
}

func (ts *testServer) stream(t *testing.T, who, path, lastID string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+who)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	seenMu.Lock()
	seen["GET /threads/{thread_id}/runs/{run_id}/stream 200"] = true
	seenMu.Unlock()
	return res
}

// TestStreamReconnect reads part of a live run's events, drops the
// connection, and reconnects with Last-Event-ID: every event arrives
// exactly once, in order, with ids run:seq.
func TestStreamReconnect(t *testing.T) {
	gate := make(chan struct{})
	ts := newTestServer(t, func(c *Config) { c.Graphs = []Graph{Of(slowGraph(t, gate))} })
	th := ts.newThread("alice", nil)
	var run RunView
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"tag": "a"}}, 202).json(t, &run)
	path := "/threads/" + th.ThreadID + "/runs/" + run.RunID + "/stream"

	res := ts.stream(t, "alice", path, "")
	first := readSSE(t, res.Body, 3)
	res.Body.Close()
	if len(first) != 3 {
		t.Fatalf("first connection: %+v", first)
	}
	close(gate) // let the run finish while nobody listens
	ts.wait("alice", run)

	res = ts.stream(t, "alice", path, first[2].ID)
	rest := readSSE(t, res.Body, -1)
	res.Body.Close()
	all := append(first, rest...)
	for i, ev := range all {
		if want := run.RunID + ":" + itoa(i+1); ev.ID != want {
			t.Fatalf("event %d: id %q, want %q (%+v)", i, ev.ID, want, all)
		}
		var e runtime.Event
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil || string(e.Type) != ev.Event || e.RunID != run.RunID {
			t.Fatalf("event %d: %+v (%v)", i, ev, err)
		}
	}
	if last := all[len(all)-1]; last.Event != "run_end" || !strings.Contains(last.Data, `"status":"done"`) {
		t.Fatalf("last event: %+v", last)
	}
	// The query form and a bad id.
	res = ts.stream(t, "alice", path+"?last_event_id="+all[len(all)-2].ID, "")
	if tail := readSSE(t, res.Body, -1); len(tail) != 1 || tail[0].Event != "run_end" {
		t.Fatalf("tail: %+v", tail)
	}
	res.Body.Close()
	ts.must("alice", "GET", path+"?last_event_id=other:1", nil, 400)
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + jsonNum(i)) }

func jsonNum(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestDoubleTexting: reject answers 409, enqueue runs after the running
// request, cancel-and-replace stops it at its superstep boundary.
func TestDoubleTexting(t *testing.T) {
	gate := make(chan struct{}, 100)
	entered := make(chan struct{}, 100)
	ts := newTestServer(t, func(c *Config) { c.Graphs = []Graph{Of(slowGraphEntered(t, gate, entered))} })
	th := ts.newThread("alice", nil)
	runs := "/threads/" + th.ThreadID + "/runs"
	var a, b, c RunView
	ts.must("alice", "POST", runs, map[string]any{"input": map[string]any{"tag": "a"}}, 202).json(t, &a)

	p := ts.must("alice", "POST", runs, map[string]any{"input": map[string]any{"tag": "b"}}, 409).problem(t)
	if p.Type != ProblemTypePrefix+"thread-busy" {
		t.Fatalf("reject: %+v", p)
	}
	var busy ThreadView
	ts.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &busy)
	if busy.Status != runtime.StatusRunning {
		t.Fatalf("thread status while running: %s", busy.Status)
	}
	ts.must("alice", "POST", runs, map[string]any{"input": map[string]any{"tag": "b"}, "double_texting": "enqueue"}, 202).json(t, &b)
	if b.Status != runtime.StatusNew {
		t.Fatalf("enqueued: %+v", b)
	}
	for range 3 {
		gate <- struct{}{}
	}
	if a = ts.wait("alice", a); a.Status != "done" {
		t.Fatalf("a: %+v", a)
	}
	gate <- struct{}{}
	if b = ts.wait("alice", b); b.Status != "done" {
		t.Fatalf("b: %+v", b)
	}

	// cancel-and-replace: c runs; d replaces it at c's next boundary.
	for len(entered) > 0 {
		<-entered // a's and b's supersteps
	}
	ts.must("alice", "POST", runs, map[string]any{"input": map[string]any{"tag": "c", "n": 0}}, 202).json(t, &c)
	<-entered // c's first superstep is in flight: it commits before c stops
	var d RunView
	ts.must("alice", "POST", runs, map[string]any{"input": map[string]any{"tag": "d", "n": 2}, "double_texting": "cancel-and-replace"}, 202).json(t, &d)
	gate <- struct{}{} // c's superstep in flight commits, then c stops
	if c = ts.wait("alice", c); c.Status != "aborted" {
		t.Fatalf("c: %+v", c)
	}
	gate <- struct{}{}
	if d = ts.wait("alice", d); d.Status != "done" {
		t.Fatalf("d: %+v", d)
	}
	var got ThreadView
	ts.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
	var v struct{ Log []string }
	_ = json.Unmarshal(got.Values, &v)
	if want := "a a a b c d"; strings.Join(v.Log, " ") != want {
		t.Fatalf("log %v, want %s", v.Log, want)
	}

	// Cancel: a queued run never starts; a running one stops.
	var e, f RunView
	ts.must("alice", "POST", runs, map[string]any{"input": map[string]any{"tag": "e", "n": 0}}, 202).json(t, &e)
	ts.must("alice", "POST", runs, map[string]any{"input": map[string]any{"tag": "f"}, "double_texting": "enqueue"}, 202).json(t, &f)
	ts.must("alice", "POST", runs+"/"+f.RunID+"/cancel", nil, 202)
	ts.must("alice", "POST", runs+"/"+e.RunID+"/cancel?mode=abort", nil, 202)
	ts.must("alice", "POST", runs+"/"+e.RunID+"/cancel?mode=later", nil, 400)
	if e = ts.wait("alice", e); e.Status != "aborted" {
		t.Fatalf("e: %+v", e)
	}
	if f = ts.wait("alice", f); f.Status != "aborted" {
		t.Fatalf("f: %+v", f)
	}
}

// TestWaitTimeout: wait answers 202 with the current status when the run
// has not ended in time.
func TestWaitTimeout(t *testing.T) {
	gate := make(chan struct{})
	ts := newTestServer(t, func(c *Config) { c.Graphs = []Graph{Of(slowGraph(t, gate))} })
	th := ts.newThread("alice", nil)
	var run RunView
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", nil, 202).json(t, &run)
	ts.must("alice", "GET", "/threads/"+th.ThreadID+"/runs/"+run.RunID+"/wait?timeout=10ms", nil, 202).json(t, &run)
	if run.Status != "running" {
		t.Fatalf("run: %+v", run)
	}
	ts.must("alice", "GET", "/threads/"+th.ThreadID+"/runs/"+run.RunID+"/wait?timeout=forever", nil, 400)
	close(gate)
}

func TestAuthorization(t *testing.T) {
	ts := newTestServer(t, nil)
	th := ts.newThread("alice", nil)
	base := "/threads/" + th.ThreadID
	// No credentials: 401 on every route, with nothing about the thread.
	for _, rt := range routes {
		path := strings.NewReplacer("{thread_id}", th.ThreadID, "{run_id}", "r", "{checkpoint_id}", "c").Replace(rt.path)
		r := ts.must("", rt.method, path, nil, 401)
		if p := r.problem(t); p.Type != ProblemTypePrefix+"unauthenticated" || strings.Contains(string(r.Body), "bearer") {
			t.Errorf("%s %s: %+v", rt.method, path, p)
		}
	}
	ts.must("", "GET", "/inbox/", nil, 401)
	// Another principal: 404 on the thread, the very answer a missing
	// one gets (no existence oracle), and left out of listings.
	for _, path := range []string{base, "/threads/nope"} {
		for _, req := range []struct{ method, path string }{{"GET", path}, {"POST", path + "/runs"}, {"GET", path + "/history"}, {"GET", path + "/diagram"}} {
			p := ts.must("bob", req.method, req.path, nil, 404).problem(t)
			id := strings.TrimPrefix(path, "/threads/")
			if p.Type != ProblemTypePrefix+"not-found" || p.Detail != "no thread "+id {
				t.Errorf("%s %s: %+v", req.method, req.path, p)
			}
		}
	}
	var list ThreadList
	ts.must("bob", "GET", "/threads", nil, 200).json(t, &list)
	if len(list.Threads) != 0 {
		t.Fatalf("bob sees %+v", list)
	}
	ts.must("alice", "POST", "/threads", map[string]any{"metadata": map[string]string{"owner": "bob"}}, 400)

	// A custom Access hook: admins read everything, nobody else runs.
	// With RevealForbidden, 403.
	ts2 := newTestServer(t, func(c *Config) {
		c.RevealForbidden = true
		c.Access = func(_ context.Context, p Principal, t ThreadRef, a Action) error {
			if p.ID == "admin" && a == ActionRead || a == ActionCreate {
				return nil
			}
			return errors.New("read-only")
		}
	})
	th2 := ts2.newThread("carol", nil)
	ts2.must("admin", "GET", "/threads/"+th2.ThreadID, nil, 200)
	ts2.must("carol", "GET", "/threads/"+th2.ThreadID, nil, 403)
	ts2.must("admin", "POST", "/threads/"+th2.ThreadID+"/runs", nil, 403)
}

func TestRequestLimits(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.MaxBodyBytes = 256 })
	th := ts.newThread("alice", nil)
	big := `{"input": {"topic": "` + strings.Repeat("x", 1000) + `"}}`
	if p := ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", big, 413).problem(t); p.Type != ProblemTypePrefix+"body-too-large" {
		t.Fatalf("413: %+v", p)
	}
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", `{"input": 1, "extra": true}`, 400)
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", `{"input": [1]}`, 400)
	ts.must("alice", "POST", "/threads", `{"graph": "nope"}`, 422)
	ts.must("alice", "POST", "/threads", map[string]any{"thread_id": th.ThreadID}, 409)
	ts.must("alice", "GET", "/threads?limit=0", nil, 400)
	ts.must("alice", "GET", "/threads?status=sleepy", nil, 400)
	ts.must("alice", "GET", "/threads?pending=maybe", nil, 400)
	ts.must("alice", "GET", "/threads/"+th.ThreadID+"/history?limit=x", nil, 400)
	ts.must("alice", "GET", "/no/such/route", nil, 404)

	req, _ := http.NewRequest("POST", ts.URL+"/threads", strings.NewReader("graph=approval"))
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 415 {
		t.Fatalf("form body: %d, want 415", res.StatusCode)
	}
}

// plainStore hides a checkpointer's thread records and event log: the
// server then keeps the thread records in memory (memRecords), and a run's
// events with the run.
type plainStore struct{ runtime.Checkpointer }

func TestPaging(t *testing.T) {
	t.Run("store", func(t *testing.T) { testPaging(t, nil) })
	t.Run("memory records", func(t *testing.T) {
		testPaging(t, func(c *Config) { c.Checkpointer = plainStore{checkpoint.NewMemory()} })
	})
}

func testPaging(t *testing.T, mod func(*Config)) {
	ts := newTestServer(t, mod)
	if _, ok := ts.records.(memRecords); ok == (mod == nil) {
		t.Fatalf("thread records %T", ts.records)
	}
	want := map[string]bool{}
	for range 5 {
		want[ts.newThread("alice", nil).ThreadID] = true
	}
	ts.newThread("bob", nil)
	got := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		var l ThreadList
		ts.must("alice", "GET", "/threads?limit=2&cursor="+cursor, nil, 200).json(t, &l)
		for _, th := range l.Threads {
			if got[th.ThreadID] || !want[th.ThreadID] {
				t.Fatalf("page %d: thread %s repeated or not alice's", pages, th.ThreadID)
			}
			got[th.ThreadID] = true
		}
		if l.NextCursor == "" {
			break
		}
		cursor = l.NextCursor
	}
	if len(got) != 5 {
		t.Fatalf("paged %d threads, want 5", len(got))
	}
	// Filters: one thread paused, with metadata; the others new.
	th := ts.newThread("alice", map[string]any{"metadata": map[string]string{"team": "blog"}})
	var run RunView
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "t"}}, 202).json(t, &run)
	ts.wait("alice", run)
	for q, want := range map[string]int{
		"pending=true": 1, "status=interrupted": 1, "pending=false": 5, "status=new": 5, "status=done": 0, "status=running": 0, "metadata.team=blog": 1,
		"metadata.team=news": 0, "graph=approval&pending=true&limit=1": 1, "graph=other": 0, "status=error": 0,
	} {
		var l ThreadList
		ts.must("alice", "GET", "/threads?"+q, nil, 200).json(t, &l)
		if len(l.Threads) != want {
			t.Errorf("?%s: %d threads, want %d", q, len(l.Threads), want)
		}
	}
	ts.must("alice", "GET", "/threads?cursor=nope", nil, 400)
	// The run's events stream from whichever log holds them.
	res := ts.stream(t, "alice", "/threads/"+th.ThreadID+"/runs/"+run.RunID+"/stream", "")
	if evs := readSSE(t, res.Body, -1); len(evs) == 0 || evs[len(evs)-1].Event != "run_end" {
		t.Errorf("events: %+v", evs)
	}
	res.Body.Close()
}

// TestListingRefusals: a refused listing says what is wrong and gives its
// advice once. A bad cursor used to read "…start again with an empty
// cursor; start again without cursor".
func TestListingRefusals(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, c := range []struct {
		query, want, advice string
	}{
		{"cursor=zzz", `cursor "zzz" is not one a listing returned (next_cursor); start again without cursor`, "start again"},
		{"cursor=t1.@@@&limit=5", `cursor "t1.@@@" is not one a listing returned (next_cursor); start again without cursor`, "start again"},
		{"metadata.=x", "a metadata filter names no key: send metadata.<key>=<value>", "metadata.<key>"},
	} {
		p := ts.must("alice", "GET", "/threads?"+c.query, nil, 400).problem(t)
		if p.Detail != c.want {
			t.Errorf("?%s: detail %q, want %q", c.query, p.Detail, c.want)
		}
		if n := strings.Count(p.Detail, c.advice); n != 1 {
			t.Errorf("?%s: detail %q gives its advice %q %d times, want once", c.query, p.Detail, c.advice, n)
		}
	}
}

func TestCORS(t *testing.T) {
	off := newTestServer(t, nil)
	req, _ := http.NewRequest("GET", off.URL+"/graphs", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Authorization", "Bearer alice")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if h := res.Header.Get("Access-Control-Allow-Origin"); h != "" {
		t.Fatalf("CORS off sent Access-Control-Allow-Origin %q", h)
	}
	on := newTestServer(t, func(c *Config) { c.CORS = &CORS{AllowedOrigins: []string{"https://app.example"}} })
	for origin, want := range map[string]string{"https://app.example": "https://app.example", "https://evil.example": ""} {
		req, _ := http.NewRequest("OPTIONS", on.URL+"/threads", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got := res.Header.Get("Access-Control-Allow-Origin"); got != want {
			t.Errorf("preflight from %s: allow-origin %q, want %q", origin, got, want)
		}
	}
}

// failingStore fails every read with an error whose text must not leak.
type failingStore struct{ runtime.Checkpointer }

func (failingStore) Get(context.Context, string, string) (*runtime.Checkpoint, error) {
	return nil, errors.New("dial tcp 10.0.0.7:5432: secret-host unreachable")
}

func TestInternalErrorsStayInside(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Checkpointer = failingStore{checkpoint.NewMemory()} })
	r := ts.must("alice", "POST", "/threads", nil, 500)
	p := r.problem(t)
	if strings.Contains(string(r.Body), "secret-host") || p.ErrorID == "" || strings.Contains(string(r.Body), "goroutine") {
		t.Fatalf("500 body leaks or lacks an error id: %s", r.Body)
	}
	if !strings.Contains(ts.logs.String(), p.ErrorID) || !strings.Contains(ts.logs.String(), "secret-host") {
		t.Fatalf("log lacks the error: %s", ts.logs.String())
	}
}

// TestClose: Close of a server whose run is blocked in a node returns
// the context's error once its deadline passes.
func TestClose(t *testing.T) {
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	ts := newTestServer(t, func(c *Config) { c.Graphs = []Graph{Of(slowGraphEntered(t, gate, entered))} })
	th := ts.newThread("alice", nil)
	var run RunView
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", nil, 202).json(t, &run)
	// A stop asked for before the first superstep starts ends the run
	// at once, and Close is then right to return nil: wait until the
	// node is in flight, so the run is truly blocked.
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := ts.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close of a blocked run: %v", err)
	}
}

// TestNextRequestRightAfterWait: once wait reports a run ended, the thread
// takes the next request at once. It used to answer 409 thread-busy while
// the ended run still held the thread's queue (seen under load; a logger
// that sleeps on the server's "run ended" record widens that moment, after
// a run reads as ended and before the thread's next queued run starts, so
// the test sees it every time).
func TestNextRequestRightAfterWait(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Logger = slog.New(sleepOnEnd{}) })
	th := ts.newThread("alice", nil)
	var run RunView
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "t"}}, 202).json(t, &run)
	run = ts.wait("alice", run)
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/resume", map[string]any{"answers": map[string]any{run.Pending[0].ID: map[string]any{"approved": true}}}, 202).json(t, &run)
	ts.wait("alice", run)
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "again"}}, 202)
}

// sleepOnEnd is a log handler that sleeps on the record of a run's end.
type sleepOnEnd struct{}

func (sleepOnEnd) Enabled(context.Context, slog.Level) bool { return true }
func (sleepOnEnd) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "server: run ended" {
		time.Sleep(30 * time.Millisecond)
	}
	return nil
}
func (h sleepOnEnd) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h sleepOnEnd) WithGroup(string) slog.Handler      { return h }

// TestStreamLimits: past Config.MaxStreamsPerRun streams on one run, or
// MaxStreams on the server, a stream is answered 429 with Retry-After;
// a closed stream frees its place.
func TestStreamLimits(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	ts := newTestServer(t, func(c *Config) {
		c.Graphs = []Graph{Of(slowGraph(t, gate))}
		c.MaxStreamsPerRun, c.MaxStreams = 2, 3
	})
	start := func() string {
		th := ts.newThread("alice", nil)
		var run RunView
		ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", nil, 202).json(t, &run)
		return "/threads/" + th.ThreadID + "/runs/" + run.RunID + "/stream"
	}
	a, b := start(), start()
	first := ts.stream(t, "alice", a, "")
	defer first.Body.Close()
	second := ts.stream(t, "alice", a, "")
	defer second.Body.Close()
	r := ts.must("alice", "GET", a, nil, 429)
	if p := r.problem(t); p.Type != ProblemTypePrefix+"too-many-streams" || r.Header.Get("Retry-After") == "" || !strings.Contains(p.Detail, "2 event streams") {
		t.Fatalf("per run: %+v %v", p, r.Header)
	}
	third := ts.stream(t, "alice", b, "")
	defer third.Body.Close()
	if p := ts.must("alice", "GET", b, nil, 429).problem(t); !strings.Contains(p.Detail, "the server has 3 event streams open") {
		t.Fatalf("per server: %+v", p)
	}
	second.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ts.mu.Lock()
		n := ts.nStreams
		ts.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream still counts: %d open", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	again := ts.stream(t, "alice", a, "")
	again.Body.Close()
}

// countingLister is a store that counts the thread records its listings
// return.
type countingLister struct {
	*checkpoint.Memory
	listed atomic.Int64
}

func (c *countingLister) ListThreads(ctx context.Context, q runtime.ThreadQuery) (runtime.ThreadPage, error) {
	page, err := c.Memory.ListThreads(ctx, q)
	c.listed.Add(int64(len(page.Threads)))
	return page, err
}

// recordThreads records n threads of owner as the server does.
func recordThreads(t testing.TB, store checkpoint.ThreadRecorder, owner string, n int) {
	t.Helper()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for i := range n {
		id := fmt.Sprintf("%s-%06d", owner, i)
		err := store.RecordThread(context.Background(), id, checkpoint.ThreadWrite{Meta: map[string]string{
			metaGraph: "approval", metaCreated: now, metaID: id, metaOwner: owner}})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestListingReadsOnlyOwnThreads: with the default Access hook, a listing
// asks the store for the principal's threads only, so another owner's
// threads are never read; with a custom hook every thread is read and
// checked.
func TestListingReadsOnlyOwnThreads(t *testing.T) {
	store := &countingLister{Memory: checkpoint.NewMemory()}
	recordThreads(t, store, "alice", 2000)
	ts := newTestServer(t, func(c *Config) { c.Checkpointer = store })
	var list ThreadList
	ts.must("bob", "GET", "/threads", nil, 200).json(t, &list)
	if len(list.Threads) != 0 || store.listed.Load() != 0 {
		t.Fatalf("bob's listing: %d threads, %d records read", len(list.Threads), store.listed.Load())
	}
	ts.must("bob", "GET", "/threads?metadata.owner=alice", nil, 200).json(t, &list)
	if len(list.Threads) != 0 || store.listed.Load() != 0 {
		t.Fatalf("bob asking for alice's: %d threads, %d records read", len(list.Threads), store.listed.Load())
	}
	ts.must("alice", "GET", "/threads?limit=10", nil, 200).json(t, &list)
	if len(list.Threads) != 10 || list.NextCursor == "" || store.listed.Load() != 10 {
		t.Fatalf("alice's first page: %d threads, %d records read", len(list.Threads), store.listed.Load())
	}

	// A custom hook (the same rule) reads every thread to find none.
	store.listed.Store(0)
	custom := newTestServer(t, func(c *Config) {
		c.Checkpointer = store
		c.Access = OwnerOnly
	})
	custom.must("bob", "GET", "/threads", nil, 200).json(t, &list)
	if len(list.Threads) != 0 || store.listed.Load() != 2000 {
		t.Fatalf("custom hook: %d threads, %d records read", len(list.Threads), store.listed.Load())
	}
}

// BenchmarkOtherOwnersListing: a principal that owns nothing lists
// threads on a store holding n threads of another owner. With the default
// Access hook the store selects by owner, so the cost is the store's
// filter: on the memory store, which scans its records, it still grows
// with n; on a store that indexes the owner key it stays flat.
func BenchmarkOtherOwnersListing(b *testing.B) {
	for _, n := range []int{0, 50000} {
		b.Run(fmt.Sprintf("threads=%d", n), func(b *testing.B) {
			store := checkpoint.NewMemory()
			recordThreads(b, store, "alice", n)
			ts := newTestServer(b, func(c *Config) { c.Checkpointer = store })
			b.ResetTimer()
			for b.Loop() {
				ts.must("bob", "GET", "/threads", nil, 200)
			}
		})
	}
}

// TestPlainStore: on a checkpointer without thread records or event log,
// the server still creates, lists, runs, answers and streams its own runs.
func TestPlainStore(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Checkpointer = plainStore{checkpoint.NewMemory()} })
	if ts.events != nil {
		t.Fatalf("event log %T on a plain store", ts.events)
	}
	th := ts.newThread("alice", nil)
	var run RunView
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "t"}}, 202).json(t, &run)
	run = ts.wait("alice", run)
	var list ThreadList
	ts.must("alice", "GET", "/threads?status=interrupted", nil, 200).json(t, &list)
	if len(list.Threads) != 1 || list.Threads[0].ThreadID != th.ThreadID {
		t.Fatalf("interrupted threads: %+v", list)
	}
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/resume", map[string]any{"answers": map[string]any{run.Pending[0].ID: map[string]any{"approved": true}}}, 202).json(t, &run)
	if run = ts.wait("alice", run); run.Status != runtime.StatusDone {
		t.Fatalf("resume: %+v", run)
	}
	res := ts.stream(t, "alice", "/threads/"+th.ThreadID+"/runs/"+run.RunID+"/stream", run.RunID+":1")
	evs := readSSE(t, res.Body, -1)
	res.Body.Close()
	if int64(len(evs)) != run.LastSeq-1 || evs[len(evs)-1].Event != "run_end" {
		t.Fatalf("events after seq 1: %d of %d", len(evs), run.LastSeq)
	}
}

// TestHostileDiagram: a graph whose node ids are hostile is drawn as
// well-formed SVG without script, served with the inbox's CSP. (Package
// graphviz's TestHostileNodeIDs walks the whole list of such ids.)
func TestHostileDiagram(t *testing.T) {
	ids := []string{"&nbsp;", `<script>alert(1)</script>`, `" onload="alert(1)`, "]]>", "javascript:x", "a\u202eb"}
	b := runtime.NewBuilder("hostile").Channel("x", "")
	prev := "__start__"
	for _, id := range ids {
		b = b.TypedNode(id, "t", nil, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }).Edge(prev, id)
		prev = id
	}
	g, err := b.Edge(prev, "__end__").Compile()
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, func(c *Config) { c.Graphs, c.RenderSVG = []Graph{Of(g)}, graphviz.New().SVG })
	th := ts.newThread("alice", nil)
	r := ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?format=svg", nil, 200)
	if r.Header.Get("Content-Security-Policy") != inboxCSP {
		t.Errorf("CSP %q", r.Header.Get("Content-Security-Policy"))
	}
	dec := xml.NewDecoder(bytes.NewReader(r.Body))
	nodes := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, r.Body)
		}
		if el, ok := tok.(xml.StartElement); ok {
			if el.Name.Local == "script" || el.Name.Local == "foreignObject" {
				t.Fatalf("%s element:\n%s", el.Name.Local, r.Body)
			}
			for _, a := range el.Attr {
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
					t.Fatalf("attribute %s:\n%s", a.Name.Local, r.Body)
				}
				if a.Name.Local == "id" && strings.HasPrefix(a.Value, "node_") {
					nodes++
				}
			}
		}
	}
	if nodes != len(ids)+2 {
		t.Errorf("%d node elements, want %d:\n%s", nodes, len(ids)+2, r.Body)
	}
}
