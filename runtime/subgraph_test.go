package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

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
	opts := []runtime.RunOption{runtime.Thread("t1"), runtime.WithCheckpointer(cp)}
	res, err := parent.Invoke(context.Background(), runtime.Values{"order": "A7"}, opts...)
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("first run: %+v %v", res, err)
	}
	if len(res.Pending) != 1 || res.Pending[0].ID != "refund/approve:interrupt#0" || res.Pending[0].Node != "refund" {
		t.Fatalf("pending: %+v", res.Pending)
	}
	if _, ok := res.State["refund_status"]; ok {
		t.Fatalf("the parent's channels changed before the child's end: %v", res.State)
	}
	res, err = parent.Resume(context.Background(), runtime.AnswersByID(map[string]any{"refund/approve:interrupt#0": "granted"}), opts...)
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
	opts := []runtime.RunOption{runtime.Thread("t2"), runtime.WithCheckpointer(cp)}
	res, err := parent.Invoke(context.Background(), runtime.Values{"order": "B1"}, opts...)
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
	_, err = parent.Resume(context.Background(), runtime.AnswersByID(map[string]any{"first/approve:interrupt#0": "x"}), opts...)
	if !errors.Is(err, runtime.ErrMissingAnswer) {
		t.Fatalf("partial resume: %v", err)
	}
	res, err = parent.Resume(context.Background(), runtime.AnswersByID(map[string]any{"first/approve:interrupt#0": "yes-1", "second/approve:interrupt#0": "yes-2"}), opts...)
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
	opts := []runtime.RunOption{runtime.Thread("t3"), runtime.WithCheckpointer(cp)}
	var events []runtime.Event
	for ev, err := range top.Stream(context.Background(), runtime.Values{"order": "C9"}, opts...) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	pend, err := runtime.PendingInterrupts(context.Background(), cp, "t3")
	if err != nil || len(pend) != 1 || pend[0].ID != "billing/refund/approve:interrupt#0" {
		t.Fatalf("pending: %+v %v", pend, err)
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
	res, err := top.Resume(context.Background(), runtime.Answer("deep"), opts...)
	if err != nil || res.Status != runtime.StatusDone || res.State["result"] != "deep" {
		t.Fatalf("resume: %+v %v", res, err)
	}
	for k, want := range map[string]int{"prep.effect": 1, "refund.check.effect": 1, "refund.pay.effect": 1, "refund.check.body": 1} {
		if got := runs.get(k); got != want {
			t.Errorf("%s ran %d times, want %d", k, got, want)
		}
	}
}
