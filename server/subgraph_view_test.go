package server

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/graphviz"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// RefundDecision is the answer a person gives inside the refund child.
type RefundDecision struct {
	Approved bool   `json:"approved" title:"Approve the refund" description:"Tick to pay the refund back."`
	Note     string `json:"note,omitempty" title:"Note to the customer"`
}

// effects counts what the refund child did, by name: its nodes' bodies
// and the side effects their journaled steps ran.
type effects struct {
	mu sync.Mutex
	n  map[string]int
}

func (e *effects) add(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == nil {
		e.n = map[string]int{}
	}
	e.n[name]++
}

func (e *effects) get(name string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n[name]
}

// refundChild looks the order up (a journaled step), asks a person to
// approve the refund, then pays it (another journaled step).
func refundChild(t testing.TB, fx *effects) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("refund").
		Channel("order", "").Channel("status", "").Channel("trail", spec.Append).
		Node("check", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			v, err := runtime.Step(ctx, "lookup", func() (string, error) {
				fx.add("lookup")
				return "found " + s["order"].(string), nil
			})
			return runtime.Values{"trail": v}, err
		}).
		Node("approve", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			d, err := runtime.Interrupt[RefundDecision](ctx, map[string]any{"question": "Refund this order?", "order": s["order"]})
			if err != nil {
				return nil, err
			}
			status := "refused"
			if d.Approved {
				status = "approved"
			}
			return runtime.Values{"status": status, "trail": "decided " + status + ": " + d.Note}, nil
		}).
		Node("pay", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			_, err := runtime.Step(ctx, "pay", func() (bool, error) { fx.add("pay"); return true, nil })
			return runtime.Values{"trail": "paid"}, err
		}).
		Edge(spec.Start, "check").Edge("check", "approve").Edge("approve", "pay").Edge("pay", spec.End).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// deskGraph takes an order in, runs the refund child as its node "refund"
// (at depth levels: 2 puts the refund child inside an "escalate" child),
// and replies with the child's status.
func deskGraph(t testing.TB, fx *effects, depth int) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	child, node := refundChild(t, fx), "refund"
	if depth == 2 {
		mid, err := runtime.NewBuilder("escalate").Channel("order", "").Channel("status", "").
			Subgraph("refund", child, map[string]string{"order": "order"}, map[string]string{"status": "status"}).
			Edge(spec.Start, "refund").Edge("refund", spec.End).Compile()
		if err != nil {
			t.Fatal(err)
		}
		child, node = mid, "escalate"
	}
	g, err := runtime.NewBuilder("desk").
		Channel("order", "").Channel("refund_status", "").Channel("log", spec.Append).
		Node("intake", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			fx.add("intake")
			return runtime.Values{"log": "intake"}, nil
		}).
		Subgraph(node, child, map[string]string{"order": "order"}, map[string]string{"refund_status": "status"}).
		Node("reply", func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			fx.add("reply")
			return runtime.Values{"log": "reply: " + s["refund_status"].(string)}, nil
		}).
		Edge(spec.Start, "intake").Edge("intake", node).Edge(node, "reply").Edge("reply", spec.End).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestThreadViewSubgraphs: a thread paused on an interrupt inside a child
// (one and two levels deep) lists the interrupt with its path and the
// child's node, in GET /threads/{id} and in the listing; the view shows
// each child's state, next nodes and pending ids; the diagram, with
// subgraphs=expand, draws the children inside their nodes and marks where
// the child stands, and without it is the §9.1 diagram; answered by its
// id, the thread completes and no child step ran twice.
func TestThreadViewSubgraphs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		depth     int
		id        string
		path      []string
		subgraphs []SubgraphView
		diagram   []string // lines the expanded diagram holds
		dot       []string // what the expanded DOT holds
		svg       []string // what the SVG holds
	}{{
		name:  "one level",
		depth: 1,
		id:    "refund/approve:interrupt#0",
		path:  []string{"refund"},
		subgraphs: []SubgraphView{{Path: []string{"refund"}, Node: "refund", Step: 1, Next: []string{"approve"},
			Pending: []string{"refund/approve:interrupt#0"}}},
		diagram: []string{`  subgraph refund ["⏸ refund"]`, `    refund_approve["⏸ approve"]`, "  class refund,refund_approve pending"},
		dot: []string{`graph [label="refund (waiting)", id="node_refund", class="pending"`, `"refund/approve" [label="approve (waiting)", id="node_refund/approve", class="pending"`,
			`"intake" -> "refund/__start__" [lhead="cluster_0"];`},
		svg: []string{`<g id="node_refund" class="cluster pending">`, `<g id="node_refund/approve" class="node pending">`, `<g id="node_refund/check" class="node">`},
	}, {
		name:  "two levels",
		depth: 2,
		id:    "escalate/refund/approve:interrupt#0",
		path:  []string{"escalate", "refund"},
		subgraphs: []SubgraphView{
			{Path: []string{"escalate"}, Node: "escalate", Step: 0, Next: []string{"refund"}, Pending: []string{"escalate/refund/approve:interrupt#0"}},
			{Path: []string{"escalate", "refund"}, Node: "refund", Step: 1, Next: []string{"approve"}, Pending: []string{"escalate/refund/approve:interrupt#0"}},
		},
		diagram: []string{`    subgraph escalate_refund ["⏸ refund"]`, `      escalate_refund_approve["⏸ approve"]`, "  class escalate,escalate_refund,escalate_refund_approve pending"},
		dot:     []string{`"escalate/refund/approve" [label="approve (waiting)", id="node_escalate/refund/approve", class="pending"`},
		svg:     []string{`<g id="node_escalate/refund" class="cluster pending">`, `<g id="node_escalate/refund/approve" class="node pending">`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			fx := &effects{}
			ts := newTestServer(t, func(c *Config) {
				c.Graphs, c.RenderSVG = []Graph{Of(deskGraph(t, fx, tc.depth))}, graphviz.New().SVG
			})
			th := ts.newThread("alice", nil)
			var run RunView
			ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"order": "A7"}}, 202).json(t, &run)
			if run = ts.wait("alice", run); run.Status != runtime.StatusInterrupted {
				t.Fatalf("run: %+v", run)
			}

			var got ThreadView
			ts.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
			if len(got.Pending) != 1 {
				t.Fatalf("pending: %+v", got.Pending)
			}
			p := got.Pending[0]
			if p.ID != tc.id || p.Node != tc.path[0] || p.ChildNode != "approve" || !slices.Equal(p.Path, tc.path) {
				t.Errorf("pending entry: id %q node %q child_node %q path %q; want %q %q approve %q", p.ID, p.Node, p.ChildNode, p.Path, tc.id, tc.path[0], tc.path)
			}
			for i := range got.Subgraphs {
				s := &got.Subgraphs[i]
				if s.CheckpointID == "" {
					t.Errorf("subgraph %v has no checkpoint id", s.Path)
				}
				var vals map[string]any
				if err := json.Unmarshal(s.Values, &vals); err != nil || vals["order"] != "A7" {
					t.Errorf("subgraph %v values %s: %v", s.Path, s.Values, err)
				}
				s.CheckpointID, s.Values = "", nil
			}
			if diff := cmp.Diff(tc.subgraphs, got.Subgraphs); diff != "" {
				t.Errorf("subgraphs (-want +got):\n%s", diff)
			}

			// The listing's entries carry the path too.
			var list ThreadList
			ts.must("alice", "GET", "/threads?status=interrupted", nil, 200).json(t, &list)
			if len(list.Threads) != 1 || len(list.Threads[0].Pending) != 1 || !slices.Equal(list.Threads[0].Pending[0].Path, tc.path) {
				t.Errorf("listing: %+v", list.Threads)
			}

			plain := string(ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram", nil, 200).Body)
			if again := string(ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?subgraphs=collapse", nil, 200).Body); again != plain {
				t.Errorf("subgraphs=collapse differs from the default:\n%s\n%s", again, plain)
			}
			if strings.Contains(plain, "subgraph ") {
				t.Errorf("the default diagram expands the children:\n%s", plain)
			}
			expanded := string(ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?subgraphs=expand", nil, 200).Body)
			lines := strings.Split(expanded, "\n")
			for _, want := range tc.diagram {
				if !slices.Contains(lines, want) {
					t.Errorf("the expanded diagram lacks %q:\n%s", want, expanded)
				}
			}
			ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?subgraphs=all", nil, 400)
			// At a checkpoint named in the request the children are drawn
			// too; where the thread stood is marked on its own nodes.
			at := string(ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?subgraphs=expand&checkpoint="+got.CheckpointID, nil, 200).Body)
			if !strings.Contains(at, "subgraph "+tc.path[0]) || !strings.Contains(at, "class "+tc.path[0]+" pending") {
				t.Errorf("the expanded diagram at checkpoint %s:\n%s", got.CheckpointID, at)
			}
			// DOT and SVG: the children as clusters, marked the same way.
			if d := string(ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?format=dot", nil, 200).Body); strings.Contains(d, "cluster") {
				t.Errorf("the default DOT draws clusters:\n%s", d)
			}
			d := string(ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?format=dot&subgraphs=expand", nil, 200).Body)
			for _, want := range tc.dot {
				if !strings.Contains(d, want) {
					t.Errorf("the expanded DOT lacks %q:\n%s", want, d)
				}
			}
			svg := string(ts.must("alice", "GET", "/threads/"+th.ThreadID+"/diagram?format=svg&subgraphs=expand", nil, 200).Body)
			for _, want := range tc.svg {
				if !strings.Contains(svg, want) {
					t.Errorf("the SVG lacks %q:\n%s", want, svg)
				}
			}

			// Answered by its id, the thread completes; nothing ran twice.
			ts.must("alice", "POST", "/threads/"+th.ThreadID+"/resume", map[string]any{"answers": map[string]any{tc.id: map[string]any{"approved": true, "note": "ok"}}}, 202).json(t, &run)
			if run = ts.wait("alice", run); run.Status != runtime.StatusDone {
				t.Fatalf("resumed run: %+v", run)
			}
			got = ThreadView{}
			ts.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
			if got.Status != runtime.StatusDone || len(got.Pending) != 0 || len(got.Subgraphs) != 0 || !strings.Contains(string(got.Values), `"reply: approved"`) {
				t.Errorf("after the answer: %s %+v %+v %s", got.Status, got.Pending, got.Subgraphs, got.Values)
			}
			for name, want := range map[string]int{"intake": 1, "lookup": 1, "pay": 1, "reply": 1} {
				if n := fx.get(name); n != want {
					t.Errorf("%s ran %d times, want %d", name, n, want)
				}
			}
		})
	}
}

// BenchmarkThreadViewSubgraphs: what the thread's view costs when the
// thread is paused inside a child (the server reads the child's state
// from the task's journal, runtime.Thread.Subgraphs) beside a thread
// paused in its own node: GET /threads/{id} of one thread, and
// GET /threads?status=interrupted of 100, through the handler.
func BenchmarkThreadViewSubgraphs(b *testing.B) {
	for _, c := range []struct {
		name  string
		graph func() *runtime.Graph[runtime.Values, runtime.Values]
		input map[string]any
	}{
		{"paused-in-own-node", func() *runtime.Graph[runtime.Values, runtime.Values] { return approvalGraph(b) }, map[string]any{"topic": "t"}},
		{"paused-inside-child", func() *runtime.Graph[runtime.Values, runtime.Values] { return deskGraph(b, &effects{}, 1) }, map[string]any{"order": "A7"}},
	} {
		ts := newTestServer(b, func(cfg *Config) { cfg.Graphs = []Graph{Of(c.graph())} })
		var first string
		for i := range 100 {
			th := ts.newThread("alice", nil)
			var run RunView
			ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": c.input}, 202).json(b, &run)
			if run = ts.wait("alice", run); run.Status != runtime.StatusInterrupted {
				b.Fatalf("run: %+v", run)
			}
			if i == 0 {
				first = th.ThreadID
			}
		}
		serve := func(b *testing.B, path string) {
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("Authorization", "Bearer alice")
			for b.Loop() {
				w := httptest.NewRecorder()
				ts.Server.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("%s: %d %s", path, w.Code, w.Body)
				}
			}
		}
		b.Run("get/"+c.name, func(b *testing.B) { serve(b, "/threads/"+first) })
		b.Run("list100/"+c.name, func(b *testing.B) { serve(b, "/threads?status=interrupted&limit=100") })
	}
}
