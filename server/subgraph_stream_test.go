package server

import (
	"encoding/json"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// TestStreamSubgraphsParameter: a run's event stream carries the events of
// its subgraphs (ns not empty) by default and with subgraphs=include, none
// of them with subgraphs=exclude, and refuses another value.
func TestStreamSubgraphsParameter(t *testing.T) {
	child, err := runtime.NewBuilder("refund").Channel("order", "").Channel("status", "").
		Node("check", func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			return runtime.Values{"status": "ok"}, nil
		}).
		Edge(spec.Start, "check").Edge("check", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	parent, err := runtime.NewBuilder("desk").Channel("order", "").Channel("status", "").
		Subgraph("refund", child, map[string]string{"order": "order"}, map[string]string{"status": "status"}).
		Edge(spec.Start, "refund").Edge("refund", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, func(c *Config) { c.Graphs = []Graph{Of(parent)} })
	th := ts.newThread("alice", nil)
	var run RunView
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"order": "A7"}}, 202).json(t, &run)
	ts.wait("alice", run)
	path := "/threads/" + th.ThreadID + "/runs/" + run.RunID + "/stream"

	for _, tc := range []struct {
		query     string
		wantChild bool
	}{{"", true}, {"?subgraphs=include", true}, {"?subgraphs=exclude", false}} {
		t.Run(tc.query, func(t *testing.T) {
			res := ts.stream(t, "alice", path+tc.query, "")
			evs := readSSE(t, res.Body, -1)
			res.Body.Close()
			children := 0
			for _, ev := range evs {
				var e runtime.Event
				if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
					t.Fatal(err)
				}
				if len(e.NS) > 0 {
					children++
					if e.NS[0] != "refund" {
						t.Errorf("child event ns %v, want it under refund", e.NS)
					}
				}
			}
			if (children > 0) != tc.wantChild {
				t.Errorf("%d child events of %d, want some: %v", children, len(evs), tc.wantChild)
			}
			if len(evs) == 0 || evs[len(evs)-1].Event != "run_end" {
				t.Errorf("the stream does not end with run_end: %+v", evs)
			}
		})
	}
	ts.must("alice", "GET", path+"?subgraphs=some", nil, 400)
}
