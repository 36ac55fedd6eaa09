package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// counter counts how often each named effect ran.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[k]++
}

func (c *counter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// refundChild is a child graph "refund": check (a journaled effect), then
// approve (asks a person), then pay (a journaled effect).
func refundChild(t *testing.T, name string, runs *counter) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	return mustCompile(t, runtime.NewBuilder(name).
		Channel("order", "").Channel("status", "").Channel("trail", spec.Append).
		Node("check", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			runs.add(name + ".check.body")
			v, err := runtime.Step(ctx, "lookup", func() (string, error) {
				runs.add(name + ".check.effect")
				return "ok:" + s["order"].(string), nil
			})
			return runtime.Values{"trail": v}, err
		}).
		Node("approve", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			runs.add(name + ".approve.body")
			ans, err := runtime.Interrupt[string](ctx, "refund "+s["order"].(string)+"?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"status": ans, "trail": "approved"}, nil
		}).
		Node("pay", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			runs.add(name + ".pay.body")
			_, err := runtime.Step(ctx, "pay", func() (bool, error) { runs.add(name + ".pay.effect"); return true, nil })
			return runtime.Values{"trail": "paid"}, err
		}).
		Edge(spec.Start, "check").Edge("check", "approve").Edge("approve", "pay").Edge("pay", spec.End))
}

func TestSubgraphPausesAndResumesInsideChild(t *testing.T) {
	var runs counter
	child := refundChild(t, "refund", &runs)
	parent := mustCompile(t, runtime.NewBuilder("support").
		Channel("order", "").Channel("refund_status", "").Channel("log", spec.Append).
		Node("intake", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			runs.add("intake")
			return runtime.Values{"log": "intake"}, nil
		}).
		Subgraph("refund", child, map[string]string{"order": "order"}, map[string]string{"refund_status": "status", "log": "trail"}).
		Node("reply", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			runs.add("reply")
			return runtime.Values{"log": "reply:" + s["refund_status"].(string)}, nil
		}).
		Edge(spec.Start, "intake").Edge("intake", "refund").Edge("refund", "reply").Edge("reply", spec.End))

	cp := checkpoint.NewMemory()
	tid, store := "t1", cp
	res, err := parent.Thread(store, tid).Invoke(context.Background(), runtime.Values{"order": "A7"})
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("first run: %+v %v", res, err)
	}
	if len(res.Pending) != 1 || res.Pending[0].ID != "refund/approve:interrupt#0" || res.Pending[0].Node != "refund" || res.Pending[0].Key != `sub"approve"/interrupt#0` {
		t.Fatalf("pending: %+v", res.Pending)
	}
	if _, ok := res.State["refund_status"]; ok {
		t.Fatalf("the parent's channels changed before the child's end: %v", res.State)
	}
	page, err := cp.ListThreads(context.Background(), checkpoint.ThreadQuery{Status: runtime.StatusInterrupted})
	if err != nil || len(page.Threads) != 1 || len(page.Threads[0].Pending) != 1 || page.Threads[0].Pending[0].ID != "refund/approve:interrupt#0" {
		t.Fatalf("an inbox does not list the child's pause by its path: %+v %v", page, err)
	}
	res, err = parent.Thread(store, tid).Resume(context.Background(), runtime.AnswersByID(map[string]any{"refund/approve:interrupt#0": "granted"}))
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume: %+v %v", res, err)
	}
	if got := res.State["refund_status"]; got != "granted" {
		t.Fatalf("refund_status = %v", got)
	}
	if got, want := strings.Join(anyStrings(res.State["log"]), ","), "intake,ok:A7,approved,paid,reply:granted"; got != want {
		t.Fatalf("log = %s, want %s", got, want)
	}
	for k, want := range map[string]int{"intake": 1, "refund.check.body": 1, "refund.check.effect": 1, "refund.approve.body": 2, "refund.pay.effect": 1, "reply": 1} {
		if got := runs.get(k); got != want {
			t.Errorf("%s ran %d times, want %d", k, got, want)
		}
	}
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestSubgraphSiblingsAnsweredInOneResume(t *testing.T) {
	var runs counter
	a := refundChild(t, "refund", &runs)
	parent := mustCompile(t, runtime.NewBuilder("support").
		Channel("order", "").Channel("a", "").Channel("b", "").Channel("done", "").
		Subgraph("first", a, map[string]string{"order": "order"}, map[string]string{"a": "status"}).
		Subgraph("second", a, map[string]string{"order": "order"}, map[string]string{"b": "status"}).
		Node("other", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			_, err := runtime.Step(ctx, "side", func() (int, error) { runs.add("other.effect"); return 1, nil })
			return runtime.Values{"done": "yes"}, err
		}).
		Edge(spec.Start, "first").Edge(spec.Start, "second").Edge(spec.Start, "other").
		Edge("first", spec.End).Edge("second", spec.End).Edge("other", spec.End))
	cp := checkpoint.NewMemory()
	tid, store := "t2", cp
	res, err := parent.Thread(store, tid).Invoke(context.Background(), runtime.Values{"order": "B1"})
	if err != nil || res.Status != runtime.StatusInterrupted || len(res.Pending) != 2 {
		t.Fatalf("first run: %+v %v", res, err)
	}
	if res.Pending[0].ID != "first/approve:interrupt#0" || res.Pending[1].ID != "second/approve:interrupt#0" {
		t.Fatalf("pending: %+v", res.Pending)
	}
	if _, ok := res.State["done"]; ok {
		t.Fatal("a task of the paused superstep committed its write")
	}
	// A resume answering only one of them is refused and writes nothing.
	_, err = parent.Thread(store, tid).Resume(context.Background(), runtime.AnswersByID(map[string]any{"first/approve:interrupt#0": "x"}))
	if !errors.Is(err, runtime.ErrMissingAnswer) {
		t.Fatalf("partial resume: %v", err)
	}
	res, err = parent.Thread(store, tid).Resume(context.Background(), runtime.AnswersByID(map[string]any{"first/approve:interrupt#0": "yes-1", "second/approve:interrupt#0": "yes-2"}))
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume: %+v %v", res, err)
	}
	if res.State["a"] != "yes-1" || res.State["b"] != "yes-2" || res.State["done"] != "yes" {
		t.Fatalf("state: %v", res.State)
	}
	for k, want := range map[string]int{"refund.check.effect": 2, "refund.pay.effect": 2, "other.effect": 1} {
		if got := runs.get(k); got != want {
			t.Errorf("%s ran %d times, want %d", k, got, want)
		}
	}
}

func TestSubgraphNestedTwoLevels(t *testing.T) {
	var runs counter
	inner := refundChild(t, "refund", &runs)
	middle := mustCompile(t, runtime.NewBuilder("billing").
		Channel("order", "").Channel("outcome", "").
		Node("prep", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			_, err := runtime.Step(ctx, "prep", func() (int, error) { runs.add("prep.effect"); return 1, nil })
			return nil, err
		}).
		Subgraph("refund", inner, map[string]string{"order": "order"}, map[string]string{"outcome": "status"}).
		Edge(spec.Start, "prep").Edge("prep", "refund").Edge("refund", spec.End))
	top := mustCompile(t, runtime.NewBuilder("support").
		Channel("order", "").Channel("result", "").
		Subgraph("billing", middle, map[string]string{"order": "order"}, map[string]string{"result": "outcome"}).
		Edge(spec.Start, "billing").Edge("billing", spec.End))
	cp := checkpoint.NewMemory()
	tid, store := "t3", cp
	var events []runtime.Event
	for ev, err := range top.Thread(store, tid).Stream(context.Background(), runtime.Values{"order": "C9"}) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	pend, err := top.Thread(cp, "t3").Pending(context.Background())
	if err != nil || len(pend) != 1 || pend[0].ID != "billing/refund/approve:interrupt#0" {
		t.Fatalf("pending: %+v %v", pend, err)
	}
	states, err := top.Thread(cp, "t3").Subgraphs(context.Background())
	if err != nil || len(states) != 2 {
		t.Fatalf("subgraph states: %+v %v", states, err)
	}
	if strings.Join(states[0].Path, "/") != "billing" || states[0].Checkpoint.Next[0].Node != "refund" ||
		strings.Join(states[1].Path, "/") != "billing/refund" || states[1].Checkpoint.Next[0].Node != "approve" ||
		len(states[1].Checkpoint.Pending) != 1 || !strings.Contains(string(states[1].Checkpoint.Channels), `"order":"C9"`) {
		t.Fatalf("subgraph states: %+v / %+v", states[0].Checkpoint, states[1].Checkpoint)
	}
	sawNested := false
	for _, ev := range events {
		if ev.Type == runtime.EventNodeStart && ev.Node == "approve" && strings.Join(ev.NS, "/") == "billing/refund" {
			sawNested = true
		}
	}
	if !sawNested {
		t.Fatal("no node_start of approve with ns [billing refund]")
	}
	res, err := top.Thread(store, tid).Resume(context.Background(), runtime.Answer("deep"))
	if err != nil || res.Status != runtime.StatusDone || res.State["result"] != "deep" {
		t.Fatalf("resume: %+v %v", res, err)
	}
	for k, want := range map[string]int{"prep.effect": 1, "refund.check.effect": 1, "refund.pay.effect": 1, "refund.check.body": 1} {
		if got := runs.get(k); got != want {
			t.Errorf("%s ran %d times, want %d", k, got, want)
		}
	}
}

// TestSubgraphCrashInsideChildContinues cancels the run inside the child
// after a step ran (as a crash would stop it) and runs the thread again:
// the child continues from its latest checkpoint, and nothing it completed
// runs again.
func TestSubgraphCrashInsideChildContinues(t *testing.T) {
	var runs counter
	ctx, cancel := context.WithCancel(context.Background())
	child := mustCompile(t, runtime.NewBuilder("c").Channel("out", spec.Append).
		Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			runs.add("a.body")
			_, err := runtime.Step(ctx, "a", func() (int, error) { runs.add("a.effect"); return 1, nil })
			return runtime.Values{"out": "a"}, err
		}).
		Node("b", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			runs.add("b.body")
			_, err := runtime.Step(ctx, "b", func() (int, error) { runs.add("b.effect"); return 1, nil })
			if err != nil {
				return nil, err
			}
			if runs.get("b.body") == 1 {
				cancel()
				return nil, ctx.Err()
			}
			return runtime.Values{"out": "b"}, nil
		}).
		Edge(spec.Start, "a").Edge("a", "b").Edge("b", spec.End))
	parent := mustCompile(t, runtime.NewBuilder("p").Channel("got", "").
		Subgraph("c", child, nil, map[string]string{"got": "out"}).
		Edge(spec.Start, "c").Edge("c", spec.End))
	cp := checkpoint.NewMemory()
	tid, store := "crash", cp
	if res, _ := parent.Thread(store, tid).Invoke(ctx, nil); res.Status != runtime.StatusAborted {
		t.Fatalf("first run: %+v", res)
	}
	res, err := parent.Thread(store, tid).Invoke(context.Background(), nil)
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("second run: %+v %v", res, err)
	}
	if got := strings.Join(anyStrings(res.State["got"]), ","); got != "a,b" {
		t.Fatalf("got = %s", got)
	}
	for k, want := range map[string]int{"a.body": 1, "a.effect": 1, "b.body": 2, "b.effect": 1} {
		if got := runs.get(k); got != want {
			t.Errorf("%s ran %d times, want %d", k, got, want)
		}
	}
}

func TestSubgraphFromSpec(t *testing.T) {
	var runs counter
	child := refundChild(t, "refund", &runs)
	const doc = `{
  "name": "support",
  "channels": {"order": {}, "status": {}, "log": {"reducer": "append"}},
  "nodes": [
    {"id": "refund", "type": "subgraph", "config": {"graph": "refund", "in": {"order": "order"}, "out": {"status": "status", "log": "trail"}}}
  ],
  "edges": [{"from": "__start__", "to": "refund"}, {"from": "refund", "to": "__end__"}]
}`
	g, err := runtime.Load("support.json", []byte(doc), runtime.Registry{}, runtime.WithSubgraphs(child))
	if err != nil {
		t.Fatal(err)
	}
	cp := checkpoint.NewMemory()
	tid, store := "spec", cp
	if res, err := g.Thread(store, tid).Invoke(context.Background(), runtime.Values{"order": "S1"}); err != nil || len(res.Pending) != 1 {
		t.Fatalf("first run: %+v %v", res, err)
	}
	res, err := g.Thread(store, tid).Resume(context.Background(), runtime.Answer("ok"))
	if err != nil || res.State["status"] != "ok" {
		t.Fatalf("resume: %+v %v", res, err)
	}
	back, err := runtime.ToSpec(g)
	if err != nil {
		t.Fatal(err)
	}
	if back.Nodes[0].Type != spec.SubgraphType {
		t.Fatalf("round trip: %+v", back.Nodes[0])
	}

	// The code-built twin stores the same node.
	code := mustCompile(t, runtime.NewBuilder("support").
		Channel("order", "").Channel("status", "").Channel("log", spec.Append).
		Subgraph("refund", child, map[string]string{"order": "order"}, map[string]string{"status": "status", "log": "trail"}).
		Edge(spec.Start, "refund").Edge("refund", spec.End))
	cs, err := runtime.ToSpec(code)
	if err != nil {
		t.Fatal(err)
	}
	again, err := runtime.FromSpec(cs, runtime.Registry{}, runtime.WithSubgraphs(child))
	if err != nil {
		t.Fatalf("FromSpec(ToSpec(code)): %v", err)
	}
	if !spec.Equal(cs, mustSpec(t, again)) {
		t.Fatal("the code-built graph's document does not round-trip")
	}
}

func mustSpec(t *testing.T, g *runtime.Graph[runtime.Values, runtime.Values]) *spec.Graph {
	t.Helper()
	d, err := runtime.ToSpec(g)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSubgraphPlacedErrors(t *testing.T) {
	var runs counter
	child := refundChild(t, "refund", &runs)
	cases := []struct {
		name, config, path, msg string
	}{
		{"unregistered child", `{"graph": "nope"}`, "nodes[0].config.graph", `graph "nope" is not registered`},
		{"unknown child channel", `{"graph": "refund", "in": {"orderz": "order"}}`, "nodes[0].config.in.orderz", `graph "refund" has no channel "orderz"`},
		{"unknown parent channel", `{"graph": "refund", "in": {"order": "missing"}}`, "nodes[0].config.in.order", `does not declare`},
		{"unknown parent out channel", `{"graph": "refund", "out": {"missing": "status"}}`, "nodes[0].config.out.missing", `graph "support" has no channel "missing"`},
		{"reducer mismatch", `{"graph": "refund", "in": {"trail": "order"}}`, "nodes[0].config.in.trail", `(append) cannot start from parent channel "order" (last_write)`},
		{"append fed back", `{"graph": "refund", "in": {"trail": "log"}, "out": {"log": "trail"}}`, "nodes[0].config.out.log", `would get back the elements`},
		{"itself", `{"graph": "support"}`, "nodes[0].config.graph", `contains itself`},
		{"fingerprint pin", `{"graph": "refund", "fingerprint": "sha256:0"}`, "nodes[0].config.fingerprint", `pins graph "refund"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := `{"name": "support", "channels": {"order": {}, "log": {"reducer": "append"}},
  "nodes": [{"id": "r", "type": "subgraph", "config": ` + c.config + `}],
  "edges": [{"from": "__start__", "to": "r"}, {"from": "r", "to": "__end__"}]}`
			d, diags := spec.Decode("support.json", []byte(doc))
			if diags.Err() != nil {
				t.Fatal(diags.Err())
			}
			got := runtime.CheckSubgraphs(d, child)
			if len(got) != 1 || got[0].Path != c.path || !strings.Contains(got[0].Message, c.msg) || got[0].Pos.Line == 0 {
				t.Fatalf("diagnostics: %+v", got)
			}
			_, err := runtime.FromSpec(d, runtime.Registry{}, runtime.WithSubgraphs(child))
			if !errors.Is(err, runtime.ErrSubgraph) || !strings.Contains(err.Error(), c.path) {
				t.Fatalf("FromSpec: %v", err)
			}
		})
	}
}

func TestSubgraphCycles(t *testing.T) {
	mk := func(name, child string) *spec.Graph {
		d, diags := spec.Decode(name+".json", []byte(`{"name": "`+name+`", "channels": {},
  "nodes": [{"id": "s", "type": "subgraph", "config": {"graph": "`+child+`"}}],
  "edges": [{"from": "__start__", "to": "s"}, {"from": "s", "to": "__end__"}]}`))
		if diags.Err() != nil {
			t.Fatal(diags.Err())
		}
		return d
	}
	got := spec.CheckSubgraphCycles(mk("a", "b"), mk("b", "c"), mk("c", "a"), mk("d", "a"))
	if len(got) != 3 {
		t.Fatalf("want a, b and c in the cycle, got %+v", got)
	}
	for _, d := range got {
		if d.Path != "nodes[0].config.graph" || !strings.Contains(d.Message, "contains itself") {
			t.Fatalf("diagnostic: %+v", d)
		}
	}
}

// TestRunSubgraphFromANode runs a child from a node's body, as a typed
// graph's node does, across a pause and its resume.
func TestRunSubgraphFromANode(t *testing.T) {
	var runs counter
	child := refundChild(t, "refund", &runs)
	parent := mustCompile(t, runtime.NewBuilder("support").
		Channel("order", "").Channel("status", "").
		Node("refund", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			runs.add("refund.body")
			out, err := runtime.RunSubgraph(ctx, child, runtime.Values{"order": s["order"]})
			if err != nil {
				return nil, err
			}
			return runtime.Values{"status": out["status"]}, nil
		}).
		Edge(spec.Start, "refund").Edge("refund", spec.End))
	cp := checkpoint.NewMemory()
	tid, store := "typed", cp
	res, err := parent.Thread(store, tid).Invoke(context.Background(), runtime.Values{"order": "T1"})
	if err != nil || len(res.Pending) != 1 || res.Pending[0].ID != "refund/approve:interrupt#0" {
		t.Fatalf("first run: %+v %v", res, err)
	}
	res, err = parent.Thread(store, tid).Resume(context.Background(), runtime.Answer("typed-ok"))
	if err != nil || res.State["status"] != "typed-ok" {
		t.Fatalf("resume: %+v %v", res, err)
	}
	for k, want := range map[string]int{"refund.body": 2, "refund.check.body": 1, "refund.check.effect": 1, "refund.pay.effect": 1} {
		if got := runs.get(k); got != want {
			t.Errorf("%s ran %d times, want %d", k, got, want)
		}
	}
}

// TestSubgraphFailureNamesThePath fails a node two levels down and checks
// that the parent's error names the path and wraps the node's error.
func TestSubgraphFailureNamesThePath(t *testing.T) {
	boom := errors.New("boom")
	inner := mustCompile(t, runtime.NewBuilder("inner").Channel("x", "").
		Node("bad", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, boom }).
		Edge(spec.Start, "bad").Edge("bad", spec.End))
	middle := mustCompile(t, runtime.NewBuilder("middle").Channel("x", "").
		Subgraph("in", inner, nil, nil).Edge(spec.Start, "in").Edge("in", spec.End))
	top := mustCompile(t, runtime.NewBuilder("top").Channel("x", "").
		Subgraph("mid", middle, nil, nil).Edge(spec.Start, "mid").Edge("mid", spec.End))
	res, err := top.Invoke(context.Background(), nil)
	var se *runtime.SubgraphError
	if res.Status != runtime.StatusError || !errors.Is(err, boom) || !errors.As(err, &se) || strings.Join(se.Path, "/") != "mid/in" {
		t.Fatalf("status %s, err %v", res.Status, err)
	}
}

// TestSubgraphMermaid draws a parent with and without its subgraph
// expanded: without, the subgraph node is a box as MODEL §9.1 draws any
// node; with, it is a subgraph block holding the child's diagram.
func TestSubgraphMermaid(t *testing.T) {
	var runs counter
	child := refundChild(t, "refund", &runs)
	parent := mustCompile(t, runtime.NewBuilder("support").Channel("order", "").Channel("decision", "").
		TypedNode("intake", "noop", nil, noop).
		Subgraph("refund", child, map[string]string{"order": "order"}, map[string]string{"decision": "status"}).
		Edge(spec.Start, "intake").Edge("intake", "refund").Edge("refund", spec.End))
	plain, err := runtime.Mermaid(parent, mermaid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const wantPlain = "flowchart TD\n  __start__([START])\n  intake[\"intake\"]\n  refund[\"refund\"]\n  __end__([END])\n  __start__ --> intake\n  intake --> refund\n  refund --> __end__\n"
	if plain != wantPlain {
		t.Fatalf("plain:\n%s\nwant:\n%s", plain, wantPlain)
	}
	expanded, err := runtime.Mermaid(parent, mermaid.Options{ExpandSubgraphs: true})
	if err != nil {
		t.Fatal(err)
	}
	const want = `flowchart TD
  __start__([START])
  intake["intake"]
  subgraph refund ["refund"]
    refund___start__([START])
    refund_check["check"]
    refund_approve["approve"]
    refund_pay["pay"]
    refund___end__([END])
    refund___start__ --> refund_check
    refund_check --> refund_approve
    refund_approve --> refund_pay
    refund_pay --> refund___end__
  end
  __end__([END])
  __start__ --> intake
  intake --> refund
  refund --> __end__
`
	if expanded != want {
		t.Fatalf("expanded:\n%s\nwant:\n%s", expanded, want)
	}
	// A graph built from a document draws its children too.
	doc := mustSpec(t, parent)
	reg := runtime.Registry{"noop": func(spec.Node) (runtime.NodeFunc, error) { return noop, nil }}
	fromDoc, err := runtime.FromSpec(doc, reg, runtime.WithSubgraphs(child))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := runtime.Mermaid(fromDoc, mermaid.Options{ExpandSubgraphs: true}); got != want {
		t.Fatalf("from the document:\n%s", got)
	}
}

func noop(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }
