package server

import (
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// approvalVersion is the approval graph with the review node's config set
// to question: two questions make two versions whose paused threads are
// incompatible (the paused node's config changed).
func approvalVersion(t *testing.T, question string) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("approval").
		Channel("decision", "").Channel("log", "append").
		TypedNode("review", "review", map[string]any{"question": question}, func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			d, err := runtime.Interrupt[Decision](ctx, question)
			if err != nil {
				return nil, err
			}
			return runtime.Values{"decision": d.Approved, "log": []any{question}}, nil
		}).
		Edge("__start__", "review").Edge("review", "__end__").
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestVersions: a thread paused on version 1 finishes on version 1 when
// the server holds both, a new thread starts on version 2, and a server
// with version 2 alone refuses the old thread with 409 and the reasons.
func TestVersions(t *testing.T) {
	v1, v2 := approvalVersion(t, "Pay?"), approvalVersion(t, "Pay this amount?")
	both, err := Versions(Of(v1), Of(v2))
	if err != nil {
		t.Fatal(err)
	}
	store := checkpoint.NewMemory()
	old := newTestServer(t, func(c *Config) { c.Checkpointer = store; c.Graphs = []Graph{Of(v1)} })
	th := old.newThread("alice", nil)
	var run RunView
	old.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", nil, 202).json(t, &run)
	if run = old.wait("alice", run); run.Status != "interrupted" || string(run.Pending[0].Payload) != `"Pay?"` {
		t.Fatalf("v1 run: %+v", run)
	}

	// Version 2 alone: refused before anything runs, with the reason.
	only2 := newTestServer(t, func(c *Config) { c.Checkpointer = store; c.Graphs = []Graph{Of(v2)} })
	p := only2.must("alice", "POST", "/threads/"+th.ThreadID+"/resume", map[string]any{"answers": map[string]any{run.Pending[0].ID: map[string]any{"approved": true}}}, 409).problem(t)
	if p.Type != ProblemTypePrefix+"incompatible" || len(p.Reasons) == 0 || p.Reasons[0].Kind != "node-config-changed" || p.Reasons[0].Subject != "review" {
		t.Fatalf("v2 alone: %+v", p)
	}

	// Both versions: the old thread finishes on version 1...
	ts := newTestServer(t, func(c *Config) { c.Checkpointer = store; c.Graphs = []Graph{both} })
	var graphs struct{ Graphs []GraphView }
	ts.must("alice", "GET", "/graphs", nil, 200).json(t, &graphs)
	if len(graphs.Graphs) != 1 || len(graphs.Graphs[0].Versions) != 2 || graphs.Graphs[0].Versions[1] != v2.Fingerprint() {
		t.Fatalf("graphs: %+v", graphs)
	}
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/resume", map[string]any{"answers": map[string]any{run.Pending[0].ID: map[string]any{"approved": true}}}, 202).json(t, &run)
	if run = ts.wait("alice", run); run.Status != "done" {
		t.Fatalf("resume on both: %+v", run)
	}
	// ...and a new thread starts on version 2.
	th2 := ts.newThread("alice", nil)
	ts.must("alice", "POST", "/threads/"+th2.ThreadID+"/runs", nil, 202).json(t, &run)
	if run = ts.wait("alice", run); string(run.Pending[0].Payload) != `"Pay this amount?"` {
		t.Fatalf("new thread: %+v", run)
	}
	// A set of versions of two different graphs is refused.
	if _, err := Versions(Of(v1), Of(slowGraph(t, nil))); err == nil {
		t.Fatal("Versions accepted two graphs")
	}
}
