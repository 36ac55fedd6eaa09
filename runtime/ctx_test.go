package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/examples/support/supportgraph"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// seen is what one task of the support graph read through its Ctx.
type seen struct {
	Node      string
	Step      int // Ctx.StepIndex
	Remaining int // Ctx.RemainingSteps
	Graph     string
	Index     int      // Ctx.Graph().NodeIndex(Node)
	Messages  []string // the messages channel of *Ctx.State()
}

// ctxRecorder collects what the tasks of a run saw; tasks of one superstep
// may record concurrently.
type ctxRecorder struct {
	mu     sync.Mutex
	seen   []seen
	shapes []*runtime.Shape // Ctx.Graph of every task
}

// record reads ctx as a node would, with messages taken from its State.
func (r *ctxRecorder) record(t *testing.T, ctx *runtime.Ctx, messages []string) {
	sh := ctx.Graph()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, seen{ctx.Node(), ctx.StepIndex(), ctx.RemainingSteps(), sh.Name, sh.NodeIndex(ctx.Node()), messages})
	r.shapes = append(r.shapes, sh)
}

// take returns what was recorded since the last call.
func (r *ctxRecorder) take() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.seen
	r.seen = nil
	return out
}

// supportKind is the support graph (agent, then checkout when the intent
// is "buy"; checkout pauses for an approval) built one way, run through
// closures so that every kind runs the same scenarios.
type supportKind struct {
	name string
	// types is NodeShape.Type of agent and checkout.
	types [2]string
	build func(t *testing.T, r *ctxRecorder, cp runtime.Checkpointer) (invoke func(ctx context.Context, msg string, opts ...runtime.RunOption) (runtime.Status, error),
		resume func(ctx context.Context, opts ...runtime.RunOption) (runtime.Status, error))
}

// valuesMessages reads the messages channel of an untyped node's state,
// which Ctx.State returns as *runtime.Values.
func valuesMessages(t *testing.T, ctx *runtime.Ctx) []string {
	st, ok := ctx.State().(*runtime.Values)
	if !ok {
		t.Errorf("%s: State() is %T, want *runtime.Values", ctx.Node(), ctx.State())
		return nil
	}
	m, err := runtime.Get[[]string](*st, "messages")
	if err != nil {
		t.Errorf("%s: %v", ctx.Node(), err)
	}
	return m
}

// untypedNodes are the agent and checkout bodies of the spec-built and the
// code-built kinds.
func untypedNodes(t *testing.T, r *ctxRecorder) (agent, checkout runtime.NodeFunc) {
	agent = func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		r.record(t, ctx, valuesMessages(t, ctx))
		return runtime.Values{"messages": "ok", "intent": "buy"}, nil
	}
	checkout = func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		r.record(t, ctx, valuesMessages(t, ctx))
		if _, err := runtime.Interrupt[string](ctx, "charge?"); err != nil {
			return nil, err
		}
		return runtime.Values{"messages": "charged"}, nil
	}
	return agent, checkout
}

// untypedRuns runs a graph over Values with the message as the input.
func untypedRuns(g *runtime.Graph[runtime.Values, runtime.Values], cp runtime.Checkpointer) (func(context.Context, string, ...runtime.RunOption) (runtime.Status, error), func(context.Context, ...runtime.RunOption) (runtime.Status, error)) {
	return func(ctx context.Context, msg string, opts ...runtime.RunOption) (runtime.Status, error) {
			res, err := g.Thread(cp, "t").Invoke(ctx, runtime.Values{"messages": msg}, opts...)
			return res.Status, err
		}, func(ctx context.Context, opts ...runtime.RunOption) (runtime.Status, error) {
			res, err := g.Thread(cp, "t").Resume(ctx, runtime.Answer("yes"), opts...)
			return res.Status, err
		}
}

// ctxNodes implements supportgraph.Nodes with the same bodies, typed.
type ctxNodes struct {
	t *testing.T
	r *ctxRecorder
}

func (n ctxNodes) LLM(supportgraph.NodeID, supportgraph.LLMConfig) (supportgraph.Node, error) {
	return func(ctx *runtime.Ctx, _ supportgraph.State) (supportgraph.Update, error) {
		n.r.record(n.t, ctx, stateMessages(n.t, ctx))
		return supportgraph.Update{Messages: []string{"ok"}, Intent: new("buy")}, nil
	}, nil
}

func (n ctxNodes) HTTP(supportgraph.NodeID, supportgraph.HTTPConfig) (supportgraph.Node, error) {
	return func(ctx *runtime.Ctx, _ supportgraph.State) (supportgraph.Update, error) {
		n.r.record(n.t, ctx, stateMessages(n.t, ctx))
		if _, err := runtime.Interrupt[string](ctx, "charge?"); err != nil {
			return supportgraph.Update{}, err
		}
		return supportgraph.Update{Messages: []string{"charged"}}, nil
	}, nil
}

// stateMessages reads the messages of a generated node's state, which
// Ctx.State returns as *supportgraph.State.
func stateMessages(t *testing.T, ctx *runtime.Ctx) []string {
	st, ok := ctx.State().(*supportgraph.State)
	if !ok {
		t.Errorf("%s: State() is %T, want *supportgraph.State", ctx.Node(), ctx.State())
		return nil
	}
	return st.Messages
}

var supportKinds = []supportKind{
	{
		name:  "spec-built",
		types: [2]string{"llm", "http"},
		build: func(t *testing.T, r *ctxRecorder, cp runtime.Checkpointer) (func(context.Context, string, ...runtime.RunOption) (runtime.Status, error), func(context.Context, ...runtime.RunOption) (runtime.Status, error)) {
			data, err := os.ReadFile("../examples/support/support.json")
			if err != nil {
				t.Fatal(err)
			}
			agent, checkout := untypedNodes(t, r)
			g, err := runtime.Load("support.json", data, runtime.Registry{
				"llm":  func(spec.Node) (runtime.NodeFunc, error) { return agent, nil },
				"http": func(spec.Node) (runtime.NodeFunc, error) { return checkout, nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			return untypedRuns(g, cp)
		},
	},
	{
		name:  "code-built",
		types: [2]string{"", ""},
		build: func(t *testing.T, r *ctxRecorder, cp runtime.Checkpointer) (func(context.Context, string, ...runtime.RunOption) (runtime.Status, error), func(context.Context, ...runtime.RunOption) (runtime.Status, error)) {
			agent, checkout := untypedNodes(t, r)
			g := mustCompile(t, runtime.NewBuilder("support-agent").
				Channel("messages", spec.Append).Channel("intent", "").
				Node("agent", agent).Node("checkout", checkout).
				Edge(spec.Start, "agent").
				EdgeWhen("agent", "checkout", spec.Eq("intent", "buy")).
				Edge("checkout", spec.End))
			return untypedRuns(g, cp)
		},
	},
	{
		name:  "generated",
		types: [2]string{"llm", "http"},
		build: func(t *testing.T, r *ctxRecorder, cp runtime.Checkpointer) (func(context.Context, string, ...runtime.RunOption) (runtime.Status, error), func(context.Context, ...runtime.RunOption) (runtime.Status, error)) {
			g, err := supportgraph.New(ctxNodes{t, r})
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context, msg string, opts ...runtime.RunOption) (runtime.Status, error) {
					res, err := g.Thread(cp, "t").Invoke(ctx, supportgraph.Update{Messages: []string{msg}}, opts...)
					return res.Status, err
				}, func(ctx context.Context, opts ...runtime.RunOption) (runtime.Status, error) {
					res, err := g.Thread(cp, "t").Resume(ctx, runtime.Answer("yes"), opts...)
					return res.Status, err
				}
		},
	},
}

// TestCtxIntrospection pins what a node reads through Ctx.StepIndex,
// Ctx.RemainingSteps, Ctx.State and Ctx.Graph, for a graph built from a
// document, one built in Go and a generated one, at the edges: the first
// superstep, the last one the recursion limit allows, the replay after a
// resume and a later run on the same thread.
func TestCtxIntrospection(t *testing.T) {
	type run struct {
		resume   bool
		msg      string // the input of a plain run
		limit    int    // WithRecursionLimit; 0: the option is not given
		status   runtime.Status
		limitErr bool // the run ends with a RecursionLimitError
		want     []seen
	}
	agent := func(step, remaining int, msgs ...string) seen {
		return seen{Node: "agent", Step: step, Remaining: remaining, Index: 0, Messages: msgs}
	}
	checkout := func(step, remaining int, msgs ...string) seen {
		return seen{Node: "checkout", Step: step, Remaining: remaining, Index: 1, Messages: msgs}
	}
	const def = runtime.DefaultRecursionLimit
	tests := []struct {
		name string
		runs []run
	}{
		{"limit given: pause, resume, next turn", []run{
			// The input is folded at step 0; the first superstep is step 1,
			// and the running superstep counts as used.
			{msg: "hi", limit: 5, status: runtime.StatusInterrupted, want: []seen{agent(1, 4, "hi"), checkout(2, 3, "hi", "ok")}},
			// The resumed run replays the paused superstep: the same step
			// index, but the first superstep of this run's limit.
			{resume: true, limit: 5, status: runtime.StatusDone, want: []seen{checkout(2, 4, "hi", "ok")}},
			// A later turn folds its input into the thread's channels and
			// starts again at __start__; the thread's counter goes on.
			{msg: "more", limit: 5, status: runtime.StatusInterrupted, want: []seen{agent(3, 4, "hi", "ok", "charged", "more"), checkout(4, 3, "hi", "ok", "charged", "more", "ok")}},
		}},
		{"default limit", []run{
			{msg: "hi", status: runtime.StatusInterrupted, want: []seen{agent(1, def-1, "hi"), checkout(2, def-2, "hi", "ok")}},
			{resume: true, status: runtime.StatusDone, want: []seen{checkout(2, def-1, "hi", "ok")}},
		}},
		{"the last allowed superstep has none remaining", []run{
			{msg: "hi", limit: 2, status: runtime.StatusInterrupted, want: []seen{agent(1, 1, "hi"), checkout(2, 0, "hi", "ok")}},
			{resume: true, limit: 1, status: runtime.StatusDone, want: []seen{checkout(2, 0, "hi", "ok")}},
		}},
		{"a node with none remaining plans past the limit", []run{
			{msg: "hi", limit: 1, status: runtime.StatusError, limitErr: true, want: []seen{agent(1, 0, "hi")}},
			// The thread keeps the planned checkout; a run with room runs it.
			{msg: "again", limit: 1, status: runtime.StatusInterrupted, want: []seen{checkout(2, 0, "hi", "ok", "again")}},
		}},
	}
	for _, kind := range supportKinds {
		for _, tc := range tests {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				var r ctxRecorder
				invoke, resume := kind.build(t, &r, checkpoint.NewMemory())
				for i, run := range tc.runs {
					var opts []runtime.RunOption
					if run.limit > 0 {
						opts = append(opts, runtime.WithRecursionLimit(run.limit))
					}
					var status runtime.Status
					var err error
					if run.resume {
						status, err = resume(context.Background(), opts...)
					} else {
						status, err = invoke(context.Background(), run.msg, opts...)
					}
					var rl *runtime.RecursionLimitError
					if status != run.status || errors.As(err, &rl) != run.limitErr || (err != nil && !run.limitErr) {
						t.Fatalf("run %d ended %s with %v, want %s (recursion limit error: %v)", i, status, err, run.status, run.limitErr)
					}
					want := slices.Clone(run.want)
					for j := range want {
						want[j].Graph = "support-agent"
					}
					if d := cmp.Diff(want, r.take()); d != "" {
						t.Errorf("run %d: what the nodes saw (-want +got):\n%s", i, d)
					}
				}
			})
		}
	}
}

// TestCtxGraphShape pins the Shape a node reads through Ctx.Graph for each
// kind of graph: the nodes in declaration order with their registry types
// (none for a code-defined node), the channels with their reducers, and
// NodeIndex, which gives a node's position in that order, or -1.
func TestCtxGraphShape(t *testing.T) {
	for _, kind := range supportKinds {
		t.Run(kind.name, func(t *testing.T) {
			var r ctxRecorder
			invoke, _ := kind.build(t, &r, checkpoint.NewMemory())
			if _, err := invoke(context.Background(), "hi"); err != nil {
				t.Fatal(err)
			}
			// Both tasks (agent, and checkout, which pauses) read the one
			// shape of the graph.
			if len(r.shapes) != 2 || r.shapes[0] != r.shapes[1] {
				t.Fatalf("the tasks saw the shapes %v, want one shape twice", r.shapes)
			}
			sh := r.shapes[0]
			wantNodes := []runtime.NodeShape{{ID: "agent", Type: kind.types[0]}, {ID: "checkout", Type: kind.types[1]}}
			if d := cmp.Diff(wantNodes, sh.Nodes); d != "" {
				t.Errorf("Nodes (-want +got):\n%s", d)
			}
			reducers := map[string]string{}
			for _, c := range sh.Channels {
				reducers[c.Name] = c.Reducer
			}
			if reducers["messages"] != "append" || reducers["intent"] != "last_write" {
				t.Errorf("Channels %+v, want messages append and intent last_write", sh.Channels)
			}
			for _, tc := range []struct {
				id   string
				want int
			}{{"agent", 0}, {"checkout", 1}, {"ghost", -1}, {spec.Start, -1}, {spec.End, -1}, {"", -1}} {
				if got := sh.NodeIndex(tc.id); got != tc.want {
					t.Errorf("NodeIndex(%q) = %d, want %d", tc.id, got, tc.want)
				}
			}
		})
	}
}

// TestCtxTaskIdentity pins Ctx.Node, TaskKey, ThreadID, Meta and State for
// a static task and for the sends to one node: a send's task key numbers it
// among the sends to that node in task order, its state is the send's
// input, and WithRunMeta's map reaches every task of the run as given.
func TestCtxTaskIdentity(t *testing.T) {
	type ident struct{ Node, Key, Thread, Meta, State string }
	var mu sync.Mutex
	var got []ident
	note := func(ctx *runtime.Ctx) {
		mu.Lock()
		defer mu.Unlock()
		st := ctx.State().(*runtime.Values)
		got = append(got, ident{ctx.Node(), ctx.TaskKey(), ctx.ThreadID(), fmt.Sprint(ctx.Meta()["tenant"]), fmt.Sprint((*st)["n"])})
	}
	g := mustCompile(t, runtime.NewBuilder("ids").Channel("n", spec.Append).
		Node("fan", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			note(ctx)
			ctx.Command(runtime.SendTo("work", runtime.Values{"n": 1}), runtime.SendTo("work", runtime.Values{"n": 2}))
			return nil, nil
		}).
		Node("work", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			note(ctx)
			return runtime.Values{"n": s["n"]}, nil
		}).
		Edge(spec.Start, "fan"))
	for _, tc := range []struct {
		name   string
		opts   []runtime.RunOption
		thread string
		meta   string
	}{
		{"no thread, no meta", nil, "", "<nil>"},
		{"thread and meta", []runtime.RunOption{runtime.WithRunMeta(map[string]any{"tenant": "acme"})}, "t-1", "acme"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			run := g.Invoke
			if tc.thread != "" {
				run = g.Thread(checkpoint.NewMemory(), tc.thread).Invoke
			}
			if _, err := run(context.Background(), nil, tc.opts...); err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(got, func(a, b ident) int { return strings.Compare(a.Key, b.Key) })
			// A send's task reads the send's input, folded into an empty
			// state, as its state.
			want := []ident{{"fan", "fan", tc.thread, tc.meta, "[]"}, {"work", "work#0", tc.thread, tc.meta, "[1]"}, {"work", "work#1", tc.thread, tc.meta, "[2]"}}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestCtxLogger pins the records a node writes through Ctx.Logger: they go
// to the run's WithLogger, carrying the thread, the run, the node and the
// task key. The graph's WithLogger is for the runtime's own records; it
// does not receive the nodes' (they go to slog.Default without WithLogger).
func TestCtxLogger(t *testing.T) {
	for _, tc := range []struct {
		name  string
		graph bool // WithLogger instead of WithLogger
	}{{"WithLogger", false}, {"WithLogger alone", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&buf, nil))
			var opts []runtime.Option
			var runOpts []runtime.RunOption
			if tc.graph {
				opts = append(opts, runtime.WithLogger(logger))
			} else {
				runOpts = append(runOpts, runtime.WithLogger(logger))
			}
			g := mustCompile(t, runtime.NewBuilder("log").Channel("x", "").
				Node("pay", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					ctx.Logger().Info("charged", "amount", 3)
					return nil, nil
				}).Edge(spec.Start, "pay"), opts...)
			res, err := g.Thread(checkpoint.NewMemory(), "t-9").Invoke(context.Background(), nil, runOpts...)
			if err != nil {
				t.Fatal(err)
			}
			var found []map[string]any
			for line := range bytes.Lines(buf.Bytes()) {
				var rec map[string]any
				if err := json.Unmarshal(line, &rec); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				if rec["msg"] == "charged" {
					delete(rec, "time")
					found = append(found, rec)
				}
			}
			want := []map[string]any{{"level": "INFO", "msg": "charged", "amount": 3.0, "thread": "t-9", "run": res.RunID, "node": "pay", "task": "pay"}}
			if tc.graph {
				want = nil
			}
			if d := cmp.Diff(want, found); d != "" {
				t.Errorf("the node's records (-want +got):\n%s", d)
			}
		})
	}
}

// TestCtxStepIndexOfRetriedSuperstep pins that a superstep retried after
// it failed keeps its StepIndex: the failed pass wrote no checkpoint, and
// the next run on the thread runs that superstep again.
func TestCtxStepIndexOfRetriedSuperstep(t *testing.T) {
	var steps []int
	fail := true
	g := mustCompile(t, runtime.NewBuilder("retry").Channel("x", "").
		Node("a", write(runtime.Values{"x": 1})).
		Node("b", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			steps = append(steps, ctx.StepIndex())
			if fail {
				return nil, errors.New("down")
			}
			return nil, nil
		}).
		Edge(spec.Start, "a").Edge("a", "b"))
	th := g.Thread(checkpoint.NewMemory(), "t")
	if _, err := th.Invoke(context.Background(), nil); err == nil {
		t.Fatal("the first run did not fail")
	}
	fail = false
	if _, err := th.Invoke(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]int{2, 2}, steps); d != "" {
		t.Errorf("StepIndex of b's passes (-want +got):\n%s", d)
	}
}
