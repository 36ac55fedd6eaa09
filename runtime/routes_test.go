package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/genimpl"
	"github.com/ilmek-go/ilmek/runtime/stream"
	"github.com/ilmek-go/ilmek/spec"
)

// guardedDoc routes check by amount with guards that miss exactly 1000.
const guardedDoc = `{
  "channels": {"amount": {"reducer": "last_write"}, "paid": {"reducer": "last_write"}},
  "nodes": [{"id": "check", "type": "t"}, {"id": "pay", "type": "pay"}, {"id": "review", "type": "pay"}],
  "edges": [
    {"from": "__start__", "to": "check"},
    {"from": "check", "to": "pay", "when": {"channel": "amount", "lt": 1000}},
    {"from": "check", "to": "review", "when": {"channel": "amount", "gt": 1000}},
    {"from": "pay", "to": "__end__"},
    {"from": "review", "to": "__end__"}
  ]
}`

func guardedRegistry() runtime.Registry {
	return runtime.Registry{
		"t":   func(spec.Node) (runtime.NodeFunc, error) { return write(nil), nil },
		"pay": func(spec.Node) (runtime.NodeFunc, error) { return write(runtime.Values{"paid": true}), nil },
	}
}

// stateEvents runs g on input and returns its state events and its status.
func stateEvents(t *testing.T, g *runtime.Graph[runtime.Values, runtime.Values], input runtime.Values, opts ...runtime.RunOption) ([]runtime.Event, runtime.Status) {
	t.Helper()
	var states []runtime.Event
	var status runtime.Status
	for ev, err := range g.Stream(context.Background(), input, opts...) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case runtime.EventState:
			states = append(states, ev)
		case runtime.EventRunEnd:
			status = ev.Status
		}
	}
	return states, status
}

// TestNoEdgeHeldIsReported: amount 1000 with lt 1000 / gt 1000 guards ends
// the run done after check, and the state event, its debug projection and a
// Warn record say that no edge of check held; 999 and 1001 say nothing.
func TestNoEdgeHeldIsReported(t *testing.T) {
	g, err := runtime.Load("pay.json", []byte(guardedDoc), guardedRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if ws := g.Warnings(); len(ws) != 1 || !strings.Contains(ws[0].Message, "none may hold") {
		t.Fatalf("the document should draw the check warning, got %v", ws)
	}
	for _, tc := range []struct {
		amount float64
		want   []string // NoEdgeHeld of the first state event
		steps  int
	}{
		{1000, []string{"check"}, 1},
		{999, nil, 2},
		{1001, nil, 2},
	} {
		h := &recordingHandler{}
		states, status := stateEvents(t, g, runtime.Values{"amount": tc.amount}, runtime.WithLogger(slog.New(h)))
		if status != runtime.StatusDone || len(states) != tc.steps {
			t.Fatalf("amount %v: status %s after %d supersteps, want done after %d", tc.amount, status, len(states), tc.steps)
		}
		if !slices.Equal(states[0].NoEdgeHeld, tc.want) {
			t.Errorf("amount %v: NoEdgeHeld = %q, want %q", tc.amount, states[0].NoEdgeHeld, tc.want)
		}
		var warns []slog.Record
		for _, r := range h.records {
			if r.Level == slog.LevelWarn {
				warns = append(warns, r)
			}
		}
		if tc.want == nil {
			if len(warns) != 0 {
				t.Errorf("amount %v: unexpected Warn records %v", tc.amount, warns)
			}
			continue
		}
		if len(warns) != 1 || warns[0].Message != "no outgoing edge held" || attrs(warns[0])["node"] != "check" || attrs(warns[0])["step"] != "1" {
			t.Errorf("amount %v: Warn records = %v", tc.amount, warns)
		}
		parts := stream.Project(states[0], stream.ModeDebug)
		data, err := json.Marshal(parts[0].Data)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"no_edge_held":["check"]`) {
			t.Errorf("amount %v: the debug projection does not show it: %s", tc.amount, data)
		}
	}
}

// hiddenEnd is a program that, like a generated one, plans nothing for a
// guarded edge to __end__: it runs inner, built without that edge, and
// describes itself by doc, which has it.
type hiddenEnd struct {
	genimpl.Program[runtime.Values, runtime.Values]
	doc *spec.Graph
}

func (h hiddenEnd) Spec() (*spec.Graph, error) { return h.doc, nil }

// TestNoEdgeHeldSeesGuardedEndEdges: a program that plans nothing for a
// held edge to __end__ is not reported; the guard is evaluated on the
// state. Code-built graphs with guard functions are reported as well.
func TestNoEdgeHeldSeesGuardedEndEdges(t *testing.T) {
	withEnd := strings.Replace(guardedDoc, `"to": "pay"`, `"to": "__end__"`, 1)
	doc, ds := spec.Decode("end.json", []byte(withEnd))
	if err := ds.Err(); err != nil {
		t.Fatal(err)
	}
	noEnd := strings.Replace(guardedDoc, `{"from": "check", "to": "pay", "when": {"channel": "amount", "lt": 1000}},`, ``, 1)
	inner, err := runtime.Load("inner.json", []byte(noEnd), guardedRegistry())
	if err != nil {
		t.Fatal(err)
	}
	g, err := genimpl.New[runtime.Values, runtime.Values](hiddenEnd{genimpl.ProgramOf(inner), doc})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		amount float64
		want   []string
	}{{999, nil}, {1000, []string{"check"}}, {1001, nil}} {
		states, status := stateEvents(t, g, runtime.Values{"amount": tc.amount})
		if status != runtime.StatusDone || !slices.Equal(states[0].NoEdgeHeld, tc.want) {
			t.Errorf("amount %v: %s, NoEdgeHeld = %q, want %q", tc.amount, status, states[0].NoEdgeHeld, tc.want)
		}
	}

	b := runtime.NewBuilder("code").Channel("amount", spec.LastWrite).
		Node("check", write(nil)).Node("pay", write(nil)).
		Edge(spec.Start, "check").
		EdgeIf("check", "pay", func(v runtime.Values) bool { f, _ := v["amount"].(float64); return f > 1000 }).
		EdgeWhen("check", spec.End, spec.Lt("amount", 1000)).
		Edge("pay", spec.End)
	cg := mustCompile(t, b)
	for _, tc := range []struct {
		amount float64
		want   []string
	}{{999, nil}, {1000, []string{"check"}}, {1001, nil}} {
		states, _ := stateEvents(t, cg, runtime.Values{"amount": tc.amount})
		if !slices.Equal(states[0].NoEdgeHeld, tc.want) {
			t.Errorf("code-built, amount %v: NoEdgeHeld = %q, want %q", tc.amount, states[0].NoEdgeHeld, tc.want)
		}
	}
}

// gotoDoc declares where split's command may route: measure (by sends) and
// __end__; sum is reached only through measure.
const gotoDoc = `{
  "channels": {"words": {}, "lengths": {"reducer": "append"}},
  "nodes": [
    {"id": "split", "type": "split", "goto": ["measure", "__end__"]},
    {"id": "measure", "type": "t"},
    {"id": "sum", "type": "t"}
  ],
  "edges": [
    {"from": "__start__", "to": "split"},
    {"from": "measure", "to": "sum"},
    {"from": "sum", "to": "__end__"}
  ]
}`

// TestDeclaredGotoIsEnforced: a document's goto list draws no unreachable
// warning, survives ToSpec, and a run refuses a goto or send outside it
// with an UndeclaredGotoError of the node — for a spec-built program and
// for one that, like a generated package, only describes itself by Spec.
func TestDeclaredGotoIsEnforced(t *testing.T) {
	for _, tc := range []struct {
		name    string
		targets []runtime.Goto
		bad     string // the refused target, "" when the run succeeds
	}{
		{"declared sends", []runtime.Goto{runtime.SendTo("measure", runtime.Values{}), runtime.SendTo("measure", runtime.Values{})}, ""},
		{"declared end", []runtime.Goto{runtime.To(spec.End)}, ""},
		{"undeclared node", []runtime.Goto{runtime.SendTo("measure", nil), runtime.To("sum")}, "sum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := runtime.Registry{
				"t": func(spec.Node) (runtime.NodeFunc, error) { return write(nil), nil },
				"split": func(spec.Node) (runtime.NodeFunc, error) {
					return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
						ctx.Command(tc.targets...)
						return nil, nil
					}, nil
				},
			}
			built, err := runtime.Load("goto.json", []byte(gotoDoc), reg)
			if err != nil {
				t.Fatal(err)
			}
			if ws := built.Warnings(); len(ws) != 0 {
				t.Fatalf("warnings: %v", ws)
			}
			doc, err := runtime.ToSpec(built)
			if err != nil || !slices.Equal(doc.Nodes[0].Goto, []string{"measure", spec.End}) {
				t.Fatalf("ToSpec: %v, goto %q", err, doc.Nodes[0].Goto)
			}
			wrapped, err := genimpl.New[runtime.Values, runtime.Values](hiddenEnd{genimpl.ProgramOf(built), doc})
			if err != nil {
				t.Fatal(err)
			}
			for name, g := range map[string]*runtime.Graph[runtime.Values, runtime.Values]{"spec-built": built, "described by Spec": wrapped} {
				res, err := g.Invoke(context.Background(), nil)
				if tc.bad == "" {
					if err != nil || res.Status != runtime.StatusDone {
						t.Fatalf("%s: Invoke: %v, %v", name, res.Status, err)
					}
					continue
				}
				var ne *runtime.NodeError
				var ue *runtime.UndeclaredGotoError
				if !errors.As(err, &ne) || ne.Node != "split" || !errors.As(err, &ue) || ue.Target != tc.bad || ue.Node != "split" {
					t.Fatalf("%s: Invoke: err = %v, want a NodeError of split wrapping an UndeclaredGotoError for %q", name, err, tc.bad)
				}
				if msg := err.Error(); !strings.Contains(msg, `add "sum" to the node's "goto" list`) {
					t.Errorf("%s: the error does not say the fix: %s", name, msg)
				}
			}
		})
	}
}

// TestNoEdgeHeldCostsNothingWhenEdgesHold: a chain whose every edge is
// guarded (and holds) allocates no more per run than the same chain with
// static edges: the check runs only after a guarded node planned nothing.
func TestNoEdgeHeldCostsNothingWhenEdgesHold(t *testing.T) {
	chain := func(guarded bool) *runtime.Graph[runtime.Values, runtime.Values] {
		b := runtime.NewBuilder("chain").Channel("go", spec.LastWrite).Node("n0", write(runtime.Values{"go": true}))
		b.Edge(spec.Start, "n0")
		for i := 1; i < 20; i++ {
			id, prev := "n"+strconv.Itoa(i), "n"+strconv.Itoa(i-1)
			b.Node(id, write(nil))
			if guarded {
				b.EdgeWhen(prev, id, spec.Truthy("go", true))
			} else {
				b.Edge(prev, id)
			}
		}
		return mustCompile(t, b)
	}
	ctx := context.Background()
	allocs := func(g *runtime.Graph[runtime.Values, runtime.Values]) float64 {
		return testing.AllocsPerRun(50, func() {
			if res, err := g.Invoke(ctx, nil); err != nil || res.Supersteps != 20 {
				t.Fatalf("%v after %d supersteps", err, res.Supersteps)
			}
		})
	}
	static, guarded := allocs(chain(false)), allocs(chain(true))
	// Within 2: under -race, sync.Pool drops items at random, so a run
	// allocates one more now and then; a check on every superstep would
	// cost at least 20 more.
	if guarded > static+2 {
		t.Errorf("guarded chain: %.0f allocations per run, static chain %.0f", guarded, static)
	}
	t.Logf("allocations per 20-superstep run: static %.0f, guarded %.0f", static, guarded)
}

// TestCoveringEndGuardCostsNothing: a program that plans nothing for a
// held edge to __end__ (as generated ones do) pays nothing when the node's
// guards cover every value (eq v with neq v): it allocates as much per run
// as with a static edge to __end__, and never reports.
func TestCoveringEndGuardCostsNothing(t *testing.T) {
	inner, err := runtime.Load("inner.json", []byte(`{
  "channels": {"intent": {}},
  "nodes": [{"id": "check", "type": "t"}, {"id": "buy", "type": "t"}],
  "edges": [
    {"from": "__start__", "to": "check"},
    {"from": "check", "to": "buy", "when": {"channel": "intent", "eq": "buy"}},
    {"from": "buy", "to": "__end__"}
  ]
}`), guardedRegistry())
	if err != nil {
		t.Fatal(err)
	}
	wrap := func(endEdge string) *runtime.Graph[runtime.Values, runtime.Values] {
		doc, ds := spec.Decode("outer.json", []byte(`{
  "channels": {"intent": {}},
  "nodes": [{"id": "check", "type": "t"}, {"id": "buy", "type": "t"}],
  "edges": [
    {"from": "__start__", "to": "check"},
    {"from": "check", "to": "buy", "when": {"channel": "intent", "eq": "buy"}},
    `+endEdge+`,
    {"from": "buy", "to": "__end__"}
  ]
}`))
		if err := ds.Err(); err != nil {
			t.Fatal(err)
		}
		g, err := genimpl.New[runtime.Values, runtime.Values](hiddenEnd{genimpl.ProgramOf(inner), doc})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	ctx := context.Background()
	allocs := func(g *runtime.Graph[runtime.Values, runtime.Values]) float64 {
		return testing.AllocsPerRun(50, func() {
			res, err := g.Invoke(ctx, runtime.Values{"intent": "chat"})
			if err != nil || res.Status != runtime.StatusDone || res.Supersteps != 1 {
				t.Fatalf("%v, %s after %d supersteps", err, res.Status, res.Supersteps)
			}
		})
	}
	static := allocs(wrap(`{"from": "check", "to": "__end__"}`))
	covering := wrap(`{"from": "check", "to": "__end__", "when": {"channel": "intent", "neq": "buy"}}`)
	// Within 2: under -race, sync.Pool drops items at random, so a run
	// allocates one more now and then; the cost this guards against was
	// 14 more per run.
	if got := allocs(covering); got > static+2 {
		t.Errorf("covering guards: %.0f allocations per run, a static edge %.0f", got, static)
	}
	if states, _ := stateEvents(t, covering, runtime.Values{"intent": "chat"}); states[0].NoEdgeHeld != nil {
		t.Errorf("covering guards reported %q", states[0].NoEdgeHeld)
	}
}
