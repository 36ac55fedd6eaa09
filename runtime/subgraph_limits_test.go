package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// chainChild is a child graph of n nodes in a row, n0 to n<n-1>, each
// appending its id to "trail" after running hook (nil: nothing) and
// counting its runs in runs.
func chainChild(t *testing.T, name string, n int, runs *counter, hook func(ctx *runtime.Ctx, id string) error) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	b := runtime.NewBuilder(name).Channel("trail", spec.Append)
	prev := spec.Start
	for i := range n {
		id := fmt.Sprintf("n%d", i)
		b.Node(id, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			runs.add(name + "." + id)
			if hook != nil {
				if err := hook(ctx, id); err != nil {
					return nil, err
				}
			}
			return runtime.Values{"trail": id}, nil
		})
		b.Edge(prev, id)
		prev = id
	}
	return mustCompile(t, b.Edge(prev, spec.End))
}

// TestSubgraphOwnRecursionLimit: a child run counts its own supersteps
// against its own limit (the config's "limit", Builder.Subgraph's and
// RunSubgraph's WithRecursionLimit, DefaultRecursionLimit otherwise), not
// the parent's, whose limit counts the parent's supersteps only.
func TestSubgraphOwnRecursionLimit(t *testing.T) {
	ctx := context.Background()
	var runs counter
	child := chainChild(t, "five", 5, &runs, nil)
	parentWith := func(opts ...runtime.RunOption) *runtime.Builder {
		return runtime.NewBuilder("p").Channel("got", spec.Append).
			Subgraph("s", child, nil, map[string]string{"got": "trail"}, opts...).
			Edge(spec.Start, "s").Edge("s", spec.End)
	}
	fromDoc := func(config string) *runtime.Graph[runtime.Values, runtime.Values] {
		g, err := runtime.Load("p.json", []byte(`{"name": "p", "channels": {"got": {"reducer": "append"}},
  "nodes": [{"id": "s", "type": "subgraph", "config": `+config+`}],
  "edges": [{"from": "__start__", "to": "s"}, {"from": "s", "to": "__end__"}]}`), runtime.Registry{}, runtime.WithSubgraphs(child))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	typed := func(opts ...runtime.RunOption) *runtime.Graph[runtime.Values, runtime.Values] {
		return mustCompile(t, runtime.NewBuilder("p").Channel("got", spec.Append).
			Node("s", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				out, err := runtime.RunSubgraph(ctx, child, runtime.Values{}, opts...)
				if err != nil {
					return nil, err
				}
				return runtime.Values{"got": out["trail"]}, nil
			}).Edge(spec.Start, "s").Edge("s", spec.End))
	}
	tests := []struct {
		name      string
		graph     *runtime.Graph[runtime.Values, runtime.Values]
		wantLimit int // 0: the run succeeds
	}{
		{"default limit, parent limit 1", mustCompile(t, parentWith()), 0},
		{"Builder.Subgraph limit 5", mustCompile(t, parentWith(runtime.WithRecursionLimit(5))), 0},
		{"Builder.Subgraph limit 4", mustCompile(t, parentWith(runtime.WithRecursionLimit(4))), 4},
		{"document limit 6", fromDoc(`{"graph": "five", "limit": 6, "out": {"got": "trail"}}`), 0},
		{"document limit 3", fromDoc(`{"graph": "five", "limit": 3, "out": {"got": "trail"}}`), 3},
		{"RunSubgraph default", typed(), 0},
		{"RunSubgraph limit 2", typed(runtime.WithRecursionLimit(2)), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, store := range []runtime.Checkpointer{nil, checkpoint.NewMemory()} {
				var res runtime.Result[runtime.Values]
				var err error
				if store == nil {
					res, err = tt.graph.Invoke(ctx, nil, runtime.WithRecursionLimit(1))
				} else {
					res, err = tt.graph.Thread(store, "limit").Invoke(ctx, nil, runtime.WithRecursionLimit(1))
				}
				if tt.wantLimit == 0 {
					if err != nil || res.Status != runtime.StatusDone || len(res.State["got"].([]any)) != 5 {
						t.Fatalf("checkpointer %v: %+v %v", store != nil, res, err)
					}
					continue
				}
				var le *runtime.RecursionLimitError
				var se *runtime.SubgraphError
				if res.Status != runtime.StatusError || !errors.As(err, &le) || le.Limit != tt.wantLimit || !errors.As(err, &se) || strings.Join(se.Path, "/") != "s" {
					t.Fatalf("checkpointer %v: status %s, err %v; want the child's limit %d under path s", store != nil, res.Status, err, tt.wantLimit)
				}
			}
		})
	}
	// The limit is stored with the node, and read back.
	d := mustSpec(t, mustCompile(t, parentWith(runtime.WithRecursionLimit(7))))
	if !strings.Contains(string(d.Nodes[0].Config), `"limit":7`) {
		t.Errorf("ToSpec config %s has no limit 7", d.Nodes[0].Config)
	}
	// Only the limit is a child's option; a limit below 1 is refused.
	for _, opt := range []runtime.RunOption{runtime.WithStopSignal(make(chan struct{})), runtime.WithRecursionLimit(0)} {
		_, err := parentWith(opt).Compile()
		var se *runtime.SpecError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), `node "s": `) || !strings.Contains(err.Error(), "WithRecursionLimit") || strings.Contains(err.Error(), "unknown") {
			t.Errorf("Builder.Subgraph with a refused option: %v", err)
		}
	}
	if res, err := typed(runtime.WithRunMeta(nil)).Invoke(ctx, nil); !errors.Is(err, runtime.ErrSubgraph) {
		t.Errorf("RunSubgraph with a refused option: %+v %v", res, err)
	}
}

// TestSubgraphStopSignalReachesChild requests a stop (WithStopSignal)
// while a child runs, one and two levels down: the child stops at its next
// superstep boundary with its checkpoint committed, the parent run ends as
// a stop does (StatusAborted, ErrStopRequested, the parent task's update
// unwritten), and the next run continues the child from its checkpoint:
// nothing that ran runs again.
func TestSubgraphStopSignalReachesChild(t *testing.T) {
	ctx := context.Background()
	for _, depth := range []int{1, 2} {
		t.Run(fmt.Sprintf("depth %d", depth), func(t *testing.T) {
			var runs counter
			stop := make(chan struct{})
			leaf := chainChild(t, "leaf", 3, &runs, func(_ *runtime.Ctx, id string) error {
				if id == "n1" && runs.get("leaf.n1") == 1 {
					close(stop) // requested while n1 runs: n1's superstep still commits
				}
				return nil
			})
			var child runtime.Child = leaf
			path := []string{"s"}
			if depth == 2 {
				child = mustCompile(t, runtime.NewBuilder("mid").Channel("trail", spec.Append).
					Subgraph("inner", leaf, nil, map[string]string{"trail": "trail"}).
					Edge(spec.Start, "inner").Edge("inner", spec.End))
				path = []string{"s", "inner"}
			}
			parent := mustCompile(t, runtime.NewBuilder("p").Channel("got", spec.Append).Channel("side", "").
				Subgraph("s", child, nil, map[string]string{"got": "trail"}).
				Node("sib", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
					runs.add("sib")
					return runtime.Values{"side": "x"}, nil
				}).
				Edge(spec.Start, "s").Edge(spec.Start, "sib").Edge("s", spec.End).Edge("sib", spec.End))
			store := checkpoint.NewMemory()
			res, err := parent.Thread(store, "stop").Invoke(ctx, nil, runtime.WithStopSignal(stop))
			if res.Status != runtime.StatusAborted || !errors.Is(err, runtime.ErrStopRequested) || !errors.Is(err, runtime.ErrAborted) {
				t.Fatalf("stopped run: status %s, err %v", res.Status, err)
			}
			if got, _ := res.State["got"].([]any); len(got) != 0 {
				t.Fatalf("the parent task's update was written: %v", res.State)
			}
			states, err := parent.Thread(store, "stop").Subgraphs(ctx)
			if err != nil || len(states) != depth {
				t.Fatalf("subgraph states: %+v %v", states, err)
			}
			in := states[depth-1]
			if strings.Join(in.Path, "/") != strings.Join(path, "/") || len(in.Checkpoint.Next) != 1 || in.Checkpoint.Next[0].Node != "n2" {
				t.Fatalf("the child did not stop at the boundary before n2: %v %+v", in.Path, in.Checkpoint)
			}
			if runs.get("leaf.n2") != 0 {
				t.Fatal("n2 ran after the stop")
			}
			res, err = parent.Thread(store, "stop").Invoke(ctx, nil)
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("next run: %+v %v", res, err)
			}
			if got := strings.Join(anyStrings(res.State["got"]), ","); got != "n0,n1,n2" {
				t.Fatalf("got = %s", got)
			}
			for _, k := range []string{"leaf.n0", "leaf.n1", "leaf.n2"} {
				if n := runs.get(k); n != 1 {
					t.Errorf("%s ran %d times, want 1", k, n)
				}
			}
		})
	}
}

// TestSubgraphCancellationReachesChild cancels the parent run's context
// while a child node waits: the child's node sees its context done, the
// parent run ends StatusAborted, and the next run continues the child from
// its checkpoint (the node that completed before does not run again; the
// cancelled one does, having completed nothing).
func TestSubgraphCancellationReachesChild(t *testing.T) {
	var runs counter
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiting := make(chan struct{})
	child := chainChild(t, "c", 2, &runs, func(ctx *runtime.Ctx, id string) error {
		if id == "n1" && runs.get("c.n1") == 1 {
			close(waiting)
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	parent := mustCompile(t, runtime.NewBuilder("p").Channel("got", spec.Append).
		Subgraph("s", child, nil, map[string]string{"got": "trail"}).
		Edge(spec.Start, "s").Edge("s", spec.End))
	store := checkpoint.NewMemory()
	go func() { <-waiting; cancel() }()
	res, err := parent.Thread(store, "cancel").Invoke(ctx, nil)
	if res.Status != runtime.StatusAborted || !errors.Is(err, context.Canceled) || !errors.Is(err, runtime.ErrAborted) {
		t.Fatalf("cancelled run: status %s, err %v", res.Status, err)
	}
	res, err = parent.Thread(store, "cancel").Invoke(context.Background(), nil)
	if err != nil || res.Status != runtime.StatusDone || strings.Join(anyStrings(res.State["got"]), ",") != "n0,n1" {
		t.Fatalf("next run: %+v %v", res, err)
	}
	if a, b := runs.get("c.n0"), runs.get("c.n1"); a != 1 || b != 2 {
		t.Errorf("n0 ran %d times (want 1), n1 %d times (want 2: cancelled, then completed)", a, b)
	}
}
