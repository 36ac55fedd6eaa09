package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestSubgraphPeerBugs reproduces, one named row each, the composition
// bugs that peers' users report (each row names the peer issue), and
// shows they do not happen here. A counter of executions proves that
// what completed does not run again.
func TestSubgraphPeerBugs(t *testing.T) {
	ctx := context.Background()
	// refundParent is intake -> refund (refundChild) -> reply.
	refundParent := func(t *testing.T, runs *counter) *runtime.Graph[runtime.Values, runtime.Values] {
		return mustCompile(t, runtime.NewBuilder("support").
			Channel("order", "").Channel("status", "").Channel("log", spec.Append).
			Node("intake", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
				runs.add("intake")
				return runtime.Values{"log": "intake"}, nil
			}).
			Subgraph("refund", refundChild(t, "refund", runs), map[string]string{"order": "order"}, map[string]string{"status": "status", "log": "trail"}).
			Node("reply", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
				runs.add("reply")
				return nil, nil
			}).
			Edge(spec.Start, "intake").Edge("intake", "refund").Edge("refund", "reply").Edge("reply", spec.End))
	}
	wantRuns := func(t *testing.T, runs *counter, want map[string]int) {
		t.Helper()
		for k, n := range want {
			if got := runs.get(k); got != n {
				t.Errorf("%s ran %d times, want %d", k, got, n)
			}
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"langgraph#4796 langgraphjs#1552: a paused child resumes where it paused, not from its start", func(t *testing.T) {
			var runs counter
			g := mustCompile(t, runtime.NewBuilder("p").Channel("order", "").Channel("status", "").
				Subgraph("refund", refundChild(t, "refund", &runs), map[string]string{"order": "order"}, map[string]string{"status": "status"}).
				Edge(spec.Start, "refund").Edge("refund", spec.End))
			store := checkpoint.NewMemory()
			if res, err := g.Thread(store, "t").Invoke(ctx, runtime.Values{"order": "A1"}); err != nil || res.Status != runtime.StatusInterrupted {
				t.Fatalf("first run: %+v %v", res, err)
			}
			res, err := g.Thread(store, "t").Resume(ctx, runtime.Answer("granted"))
			if err != nil || res.State["status"] != "granted" {
				t.Fatalf("resume: %+v %v", res, err)
			}
			// approve runs twice (it asked, then it took the answer); the
			// child's first node is not run again.
			wantRuns(t, &runs, map[string]int{"refund.check.body": 1, "refund.check.effect": 1, "refund.approve.body": 2, "refund.pay.body": 1})
		}},
		{"langgraph#6792: tasks of the child that completed before the pause do not run again on resume", func(t *testing.T) {
			var runs counter
			// In the child's paused superstep, "work" completes (a journaled
			// effect) beside "ask", which pauses; "first" ran a superstep before.
			child := mustCompile(t, runtime.NewBuilder("c").Channel("done", spec.Append).Channel("answer", "").
				Node("first", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					runs.add("first.body")
					_, err := runtime.Step(ctx, "e", func() (int, error) { runs.add("first.effect"); return 1, nil })
					return runtime.Values{"done": "first"}, err
				}).
				Node("work", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					_, err := runtime.Step(ctx, "e", func() (int, error) { runs.add("work.effect"); return 1, nil })
					return runtime.Values{"done": "work"}, err
				}).
				Node("ask", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					v, err := runtime.Interrupt[string](ctx, "?")
					return runtime.Values{"answer": v}, err
				}).
				Edge(spec.Start, "first").Edge("first", "work").Edge("first", "ask").Edge("work", spec.End).Edge("ask", spec.End))
			g := mustCompile(t, runtime.NewBuilder("p").Channel("done", spec.Append).Channel("answer", "").
				Subgraph("c", child, nil, map[string]string{"done": "done", "answer": "answer"}).
				Edge(spec.Start, "c").Edge("c", spec.End))
			store := checkpoint.NewMemory()
			if res, err := g.Thread(store, "t").Invoke(ctx, nil); err != nil || res.Status != runtime.StatusInterrupted {
				t.Fatalf("first run: %+v %v", res, err)
			}
			res, err := g.Thread(store, "t").Resume(ctx, runtime.Answer("yes"))
			if err != nil || res.State["answer"] != "yes" || strings.Join(anyStrings(res.State["done"]), ",") != "first,work" {
				t.Fatalf("resume: %+v %v", res, err)
			}
			wantRuns(t, &runs, map[string]int{"first.body": 1, "first.effect": 1, "work.effect": 1})
		}},
		{"langgraph#8458 langgraph#7561: a fork of the parent while the child is paused forks the child from the matching point", func(t *testing.T) {
			var runs counter
			g := refundParent(t, &runs)
			store := checkpoint.NewMemory()
			paused, err := g.Thread(store, "t").Invoke(ctx, runtime.Values{"order": "F1"})
			if err != nil || paused.Status != runtime.StatusInterrupted {
				t.Fatalf("first run: %+v %v", paused, err)
			}
			if res, err := g.Thread(store, "t").Resume(ctx, runtime.Answer("main")); err != nil || res.State["status"] != "main" {
				t.Fatalf("resume: %+v %v", res, err)
			}
			res, err := g.Thread(store, "t").Fork(paused.CheckpointID).Resume(ctx, runtime.Answer("forked"))
			if err != nil || res.Status != runtime.StatusDone || res.State["status"] != "forked" {
				t.Fatalf("fork: %+v %v", res, err)
			}
			// One pass before the pause, one resume on each branch.
			wantRuns(t, &runs, map[string]int{"intake": 1, "refund.check.body": 1, "refund.check.effect": 1, "refund.approve.body": 3, "refund.pay.effect": 2})
		}},
		{"langgraph#2870: several interrupts in one child each get their own answer, none reused", func(t *testing.T) {
			var runs counter
			ask := func(name string) runtime.NodeFunc {
				return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					runs.add(name)
					first, err := runtime.Interrupt[string](ctx, name+" first?")
					if err != nil {
						return nil, err
					}
					second, err := runtime.Interrupt[string](ctx, name+" second?")
					return runtime.Values{name: first + "+" + second}, err
				}
			}
			child := mustCompile(t, runtime.NewBuilder("two").Channel("x", "").Channel("y", "").
				Node("x", ask("x")).Node("y", ask("y")).
				Edge(spec.Start, "x").Edge(spec.Start, "y").Edge("x", spec.End).Edge("y", spec.End))
			g := mustCompile(t, runtime.NewBuilder("p").Channel("px", "").Channel("py", "").
				Subgraph("s", child, nil, map[string]string{"px": "x", "py": "y"}).
				Edge(spec.Start, "s").Edge("s", spec.End))
			store := checkpoint.NewMemory()
			res, err := g.Thread(store, "t").Invoke(ctx, nil)
			if err != nil || len(res.Pending) != 2 || res.Pending[0].ID != "s/x:interrupt#0" || res.Pending[1].ID != "s/y:interrupt#0" {
				t.Fatalf("first run: %+v %v", res, err)
			}
			if _, err := g.Thread(store, "t").Resume(ctx, runtime.Answer("bare")); !errors.Is(err, runtime.ErrAmbiguousAnswer) {
				t.Fatalf("one bare answer to two interrupts: %v", err)
			}
			res, err = g.Thread(store, "t").Resume(ctx, runtime.AnswersByID(map[string]any{"s/x:interrupt#0": "x1", "s/y:interrupt#0": "y1"}))
			if err != nil || len(res.Pending) != 2 || res.Pending[0].ID != "s/x:interrupt#1" || res.Pending[1].ID != "s/y:interrupt#1" {
				t.Fatalf("second pause: %+v %v", res, err)
			}
			res, err = g.Thread(store, "t").Resume(ctx, runtime.AnswersByID(map[string]any{"s/x:interrupt#1": "x2", "s/y:interrupt#1": "y2"}))
			if err != nil || res.State["px"] != "x1+x2" || res.State["py"] != "y1+y2" {
				t.Fatalf("resume: %+v %v", res, err)
			}
		}},
		{"deepagents#2781: a resumed child does not overwrite what sibling tasks of its superstep wrote", func(t *testing.T) {
			var runs counter
			child := mustCompile(t, runtime.NewBuilder("c").Channel("notes", "").Channel("status", "").Channel("trail", spec.Append).
				Node("ask", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					v, err := runtime.Interrupt[string](ctx, "ok?")
					return runtime.Values{"status": v, "notes": "child's own", "trail": "child"}, err
				}).Edge(spec.Start, "ask").Edge("ask", spec.End))
			g := mustCompile(t, runtime.NewBuilder("p").Channel("notes", "").Channel("status", "").Channel("log", spec.Append).
				Subgraph("c", child, map[string]string{"notes": "notes"}, map[string]string{"status": "status", "log": "trail"}).
				Node("sib", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					_, err := runtime.Step(ctx, "write", func() (int, error) { runs.add("sib.effect"); return 1, nil })
					return runtime.Values{"notes": "sibling", "log": "sib"}, err
				}).
				Edge(spec.Start, "c").Edge(spec.Start, "sib").Edge("c", spec.End).Edge("sib", spec.End))
			store := checkpoint.NewMemory()
			if _, err := g.Thread(store, "t").Invoke(ctx, runtime.Values{"notes": "before"}); err != nil {
				t.Fatal(err)
			}
			res, err := g.Thread(store, "t").Resume(ctx, runtime.Answer("yes"))
			if err != nil || res.State["notes"] != "sibling" || res.State["status"] != "yes" || strings.Join(anyStrings(res.State["log"]), ",") != "child,sib" {
				t.Fatalf("resume: %+v %v", res, err)
			}
			wantRuns(t, &runs, map[string]int{"sib.effect": 1})
		}},
		{"keys dropped at the boundary: a channel one side lacks is refused when built, not read as missing", func(t *testing.T) {
			child := mustCompile(t, runtime.NewBuilder("c").Channel("secret", "").Channel("shared", "").
				Node("n", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
					return runtime.Values{"secret": "s", "shared": "v"}, nil
				}).
				Edge(spec.Start, "n").Edge("n", spec.End))
			_, err := runtime.NewBuilder("p").Channel("shared", "").
				Subgraph("c", child, nil, map[string]string{"secret": "secret"}).
				Edge(spec.Start, "c").Edge("c", spec.End).Compile()
			if err == nil || !strings.Contains(err.Error(), `graph "p" has no channel "secret"`) {
				t.Fatalf("code: err = %v", err)
			}
			d, diags := spec.Decode("p.json", []byte(`{"name": "p", "channels": {"shared": {}},
  "nodes": [{"id": "c", "type": "subgraph", "config": {"graph": "c", "out": {"shared": "shared", "secret": "secret"}}}],
  "edges": [{"from": "__start__", "to": "c"}, {"from": "c", "to": "__end__"}]}`))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := runtime.CheckSubgraphs(d, child)
			if len(got) != 1 || got[0].Path != "nodes[0].config.out.secret" || got[0].Pos.Line == 0 {
				t.Fatalf("document: %+v", got)
			}
			// What is mapped comes through; what is not stays the child's.
			g := mustCompile(t, runtime.NewBuilder("p").Channel("shared", "").
				Subgraph("c", child, nil, map[string]string{"shared": "shared"}).
				Edge(spec.Start, "c").Edge("c", spec.End))
			res, err := g.Invoke(ctx, nil)
			if _, leaked := res.State["secret"]; err != nil || res.State["shared"] != "v" || leaked {
				t.Fatalf("run: %+v %v", res, err)
			}
		}},
		{"langgraph-studio#197: a node inside a child is visible and targetable", func(t *testing.T) {
			var runs counter
			g := refundParent(t, &runs)
			store := checkpoint.NewMemory()
			if _, err := g.Thread(store, "t").Invoke(ctx, runtime.Values{"order": "V1"}); err != nil {
				t.Fatal(err)
			}
			page, err := store.ListThreads(ctx, checkpoint.ThreadQuery{Status: runtime.StatusInterrupted})
			if err != nil || len(page.Threads) != 1 || len(page.Threads[0].Pending) != 1 {
				t.Fatalf("inbox: %+v %v", page, err)
			}
			p := page.Threads[0].Pending[0]
			if p.ID != "refund/approve:interrupt#0" || p.Node != "refund" || p.Key != `sub"approve"/interrupt#0` || string(p.Payload) != `"refund V1?"` {
				t.Fatalf("the pending entry does not name the child's node by its path: %+v", p)
			}
			states, err := g.Thread(store, "t").Subgraphs(ctx)
			if err != nil || len(states) != 1 || strings.Join(states[0].Path, "/") != "refund" ||
				len(states[0].Checkpoint.Next) != 1 || states[0].Checkpoint.Next[0].Node != "approve" ||
				len(states[0].Checkpoint.Pending) != 1 || states[0].Checkpoint.Pending[0].ID != "approve:interrupt#0" {
				t.Fatalf("Thread.Subgraphs does not show where the child stands: %+v %v", states, err)
			}
			res, err := g.Thread(store, "t").Resume(ctx, runtime.AnswersByID(map[string]any{p.ID: "targeted"}))
			if err != nil || res.State["status"] != "targeted" {
				t.Fatalf("resume by the path-qualified id: %+v %v", res, err)
			}
		}},
		{"langgraphjs#1531: child events carry ns in streams", func(t *testing.T) {
			var runs counter
			g := refundParent(t, &runs)
			seen := map[string]string{} // node -> ns of its node_start
			for ev, err := range g.Thread(checkpoint.NewMemory(), "t").Stream(ctx, runtime.Values{"order": "E1"}) {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Type == runtime.EventNodeStart {
					seen[ev.Node] = "[" + strings.Join(ev.NS, " ") + "]"
				}
			}
			for node, ns := range map[string]string{"intake": "[]", "refund": "[]", "check": "[refund]", "approve": "[refund]"} {
				if seen[node] != ns {
					t.Errorf("node_start of %s has ns %q, want %s (all: %v)", node, seen[node], ns, seen)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}
