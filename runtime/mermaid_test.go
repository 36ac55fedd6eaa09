package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestThreadMermaid draws a paused thread: the node waiting on a person is
// pending (⏸), the other planned task next; a router with declared
// targets is dashed to each.
func TestThreadMermaid(t *testing.T) {
	ask := func(rc *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		ok, err := runtime.Interrupt[bool](rc, "approve?")
		return runtime.Values{"ok": ok}, err
	}
	g := mustCompile(t, runtime.NewBuilder("review").Channel("ok", "").
		Node("write", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }).
		Node("review", ask).
		Node("legal", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }).
		Edge(spec.Start, "write").Edge("write", "review").Edge("write", "legal").
		RouterTo("review", []string{"write", spec.End}, func(v runtime.Values) ([]runtime.Goto, error) {
			return []runtime.Goto{{Node: spec.End}}, nil
		}))
	cp := checkpoint.NewMemory()
	th := g.Thread(cp, "t")
	if res, err := th.Invoke(context.Background(), nil); err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("%q %v", res.Status, err)
	}
	ts, err := g.Thread(cp, "t").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, err := runtime.ThreadMermaid(g, ts, mermaid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `flowchart TD
  __start__([START])
  write["write"]
  review["⏸ review"]
  legal["legal"]
  __end__([END])
  __start__ --> write
  write --> review
  write --> legal
  review -.-> write
  review -.-> __end__
  classDef next stroke-width:3px
  class legal next
  classDef pending stroke-width:3px,stroke-dasharray:5 3
  class review pending
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestRouterToRefusesUndeclaredTargets: a router that picks a node it did
// not declare fails the run, and an unknown declared target fails Compile.
func TestRouterToRefusesUndeclaredTargets(t *testing.T) {
	noop := func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }
	g := mustCompile(t, runtime.NewBuilder("r").Node("a", noop).Node("b", noop).Node("c", noop).
		Edge(spec.Start, "a").
		RouterTo("a", []string{"b"}, func(runtime.Values) ([]runtime.Goto, error) { return []runtime.Goto{{Node: "c"}}, nil }))
	if _, err := g.Invoke(context.Background(), nil); err == nil || !strings.Contains(err.Error(), `picked "c", which it does not declare`) {
		t.Errorf("undeclared target: %v", err)
	}
	_, err := runtime.NewBuilder("r").Node("a", noop).Edge(spec.Start, "a").
		RouterTo("a", []string{"ghost"}, func(runtime.Values) ([]runtime.Goto, error) { return nil, nil }).Compile()
	if err == nil || !strings.Contains(err.Error(), `declares unknown target "ghost"`) {
		t.Errorf("unknown declared target: %v", err)
	}
}
