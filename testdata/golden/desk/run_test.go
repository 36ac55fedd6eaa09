package desk_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
	"github.com/ilmek-go/ilmek/testdata/golden/desk/deskgraph"
	"github.com/ilmek-go/ilmek/testdata/golden/refund/refundgraph"
)

// runs counts node bodies and step effects.
type runs struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *runs) add(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[string]int{}
	}
	r.n[k]++
}

func (r *runs) get(k string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[k]
}

// desk implements deskgraph.Nodes; refund implements the child's
// refundgraph.Nodes, which deskgraph.Nodes asks for.
type desk struct{ r *runs }

type refund struct{ r *runs }

func (d desk) Triage(deskgraph.NodeID, deskgraph.TriageConfig) (deskgraph.Node, error) {
	return func(ctx *runtime.Ctx, s deskgraph.State) (deskgraph.Update, error) {
		d.r.add("intake")
		return deskgraph.Update{Log: []string{"intake"}}, nil
	}, nil
}

func (d desk) Respond(deskgraph.NodeID, deskgraph.RespondConfig) (deskgraph.Node, error) {
	return func(ctx *runtime.Ctx, s deskgraph.State) (deskgraph.Update, error) {
		d.r.add("reply")
		return deskgraph.Update{Log: []string{"reply:" + s.Status}}, nil
	}, nil
}

func (d desk) SubgraphRefund() refundgraph.Nodes { return refund(d) }

func (f refund) Lookup(refundgraph.NodeID, refundgraph.LookupConfig) (refundgraph.Node, error) {
	return func(ctx *runtime.Ctx, s refundgraph.State) (refundgraph.Update, error) {
		f.r.add("check.body")
		v, err := runtime.Step(ctx, "lookup", func() (string, error) {
			f.r.add("check.effect")
			return "ok:" + s.Order, nil
		})
		return refundgraph.Update{Trail: []string{v}}, err
	}, nil
}

func (f refund) Approval(_ refundgraph.NodeID, cfg refundgraph.ApprovalConfig) (refundgraph.Node, error) {
	return func(ctx *runtime.Ctx, s refundgraph.State) (refundgraph.Update, error) {
		f.r.add("approve.body")
		ans, err := runtime.Interrupt[string](ctx, cfg.Question+" "+s.Order)
		if err != nil {
			return refundgraph.Update{}, err
		}
		return refundgraph.Update{Decision: &ans, Trail: []string{"approved"}}, nil
	}, nil
}

// TestPauseInsideChildAndResume runs the generated parent, which pauses
// inside its generated child; a second instance of the parent (as another
// process would build it) resumes it by the path-qualified id, and nothing
// that completed inside the child runs again.
func TestPauseInsideChildAndResume(t *testing.T) {
	r := &runs{}
	cp := checkpoint.NewMemory()
	g, err := deskgraph.New(desk{r})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Thread(cp, "t1").Invoke(context.Background(), deskgraph.Update{Order: new("A7")})
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("first run: %+v %v", res, err)
	}
	if len(res.Pending) != 1 || res.Pending[0].ID != "refund/approve:interrupt#0" || res.Pending[0].Node != "refund" || string(res.Pending[0].Payload) != `"refund? A7"` {
		t.Fatalf("pending: %+v", res.Pending)
	}
	if res.State.HasStatus() || len(res.State.Log) != 1 {
		t.Fatalf("the parent's channels changed before the child's end: %+v", res.State)
	}

	again, err := deskgraph.New(desk{r})
	if err != nil {
		t.Fatal(err)
	}
	res, err = again.Thread(cp, "t1").Resume(context.Background(), runtime.AnswersByID(map[string]any{"refund/approve:interrupt#0": "granted"}))
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume: %+v %v", res, err)
	}
	if res.State.Status != "granted" {
		t.Errorf("status = %q, want granted", res.State.Status)
	}
	if got, want := strings.Join(res.State.Log, ","), "intake,ok:A7,approved,reply:granted"; got != want {
		t.Errorf("log = %s, want %s", got, want)
	}
	for k, want := range map[string]int{"intake": 1, "check.body": 1, "check.effect": 1, "approve.body": 2, "reply": 1} {
		if got := r.get(k); got != want {
			t.Errorf("%s ran %d times, want %d", k, got, want)
		}
	}
}

// TestFromRegistryWiresTheChild checks that the registry adapter hands the
// child its own registry adapter: New(FromRegistry(reg)) builds the
// parent and the child from the same registry's factories.
func TestFromRegistryWiresTheChild(t *testing.T) {
	reg := runtime.Registry{
		"triage":  func(spec.Node) (runtime.NodeFunc, error) { return constant("log", "intake"), nil },
		"respond": func(spec.Node) (runtime.NodeFunc, error) { return constant("log", "reply"), nil },
		"lookup":  func(spec.Node) (runtime.NodeFunc, error) { return constant("trail", "looked"), nil },
		"approval": func(spec.Node) (runtime.NodeFunc, error) {
			return constant("decision", "auto"), nil
		},
	}
	g, err := deskgraph.New(deskgraph.FromRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(context.Background(), deskgraph.Update{Order: new("B1")})
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("run: %+v %v", res, err)
	}
	if res.State.Status != "auto" || strings.Join(res.State.Log, ",") != "intake,looked,reply" {
		t.Errorf("state %+v", res.State)
	}
}

// constant is a node writing v to channel ch.
func constant(ch, v string) runtime.NodeFunc {
	return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{ch: v}, nil }
}

// autoDesk is desk whose child approves at once, without an interrupt.
type autoDesk struct{ desk }

func (d autoDesk) SubgraphRefund() refundgraph.Nodes { return autoRefund{refund(d.desk)} }

type autoRefund struct{ refund }

func (f autoRefund) Approval(refundgraph.NodeID, refundgraph.ApprovalConfig) (refundgraph.Node, error) {
	return func(ctx *runtime.Ctx, s refundgraph.State) (refundgraph.Update, error) {
		return refundgraph.Update{Decision: new("auto"), Trail: []string{"approved"}}, nil
	}, nil
}

// TestChildWithoutCheckpointer runs the generated parent and child to their
// end without a checkpointer, where RunSubgraph hands the typed seed and
// final state across without JSON, and with one, where they cross as the
// child's stored channels: both end in the same state. Without a
// checkpointer a pause inside the child is still listed by its
// path-qualified id.
func TestChildWithoutCheckpointer(t *testing.T) {
	g, err := deskgraph.New(autoDesk{desk{&runs{}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	plain, err := g.Invoke(ctx, deskgraph.Update{Order: new("A7")})
	if err != nil || plain.Status != runtime.StatusDone {
		t.Fatalf("without a checkpointer: %+v %v", plain, err)
	}
	stored, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(ctx, deskgraph.Update{Order: new("A7")})
	if err != nil || stored.Status != runtime.StatusDone {
		t.Fatalf("with a checkpointer: %+v %v", stored, err)
	}
	want := "intake,ok:A7,approved,reply:auto"
	for name, st := range map[string]deskgraph.State{"without a checkpointer": plain.State, "with one": stored.State} {
		if got := strings.Join(st.Log, ","); got != want || st.Status != "auto" {
			t.Errorf("%s: status %q, log %s; want auto, %s", name, st.Status, got, want)
		}
	}

	paused, err := deskgraph.New(desk{&runs{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := paused.Invoke(ctx, deskgraph.Update{Order: new("A7")})
	if err != nil || res.Status != runtime.StatusInterrupted || len(res.Pending) != 1 || res.Pending[0].ID != "refund/approve:interrupt#0" {
		t.Fatalf("a pause without a checkpointer: %+v %v", res, err)
	}
}

// TestGeneratedVersionPinsChild: New hands the runtime the child it
// builds, so the generated parent's fingerprint is its document's with
// the child pinned, as a spec-built parent's is: the same version whatever
// the program kind.
func TestGeneratedVersionPinsChild(t *testing.T) {
	g, err := deskgraph.New(desk{&runs{}})
	if err != nil {
		t.Fatal(err)
	}
	child, err := refundgraph.New(refund{&runs{}})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := runtime.ToSpec(g)
	if err != nil {
		t.Fatal(err)
	}
	pinned := spec.PinSubgraphs(doc, map[string]string{"refund": child.Fingerprint()})
	if g.Fingerprint() != pinned.Fingerprint() || g.Fingerprint() == doc.Fingerprint() {
		t.Fatalf("fingerprint %s; document %s, pinned %s", g.Fingerprint(), doc.Fingerprint(), pinned.Fingerprint())
	}
	reg := runtime.Registry{}
	for _, typ := range []string{"triage", "respond"} {
		reg[typ] = func(spec.Node) (runtime.NodeFunc, error) { return constant("log", typ), nil }
	}
	built, err := runtime.FromSpec(doc, reg, runtime.WithSubgraphs(child))
	if err != nil {
		t.Fatal(err)
	}
	if built.Fingerprint() != g.Fingerprint() {
		t.Errorf("spec-built %s, generated %s", built.Fingerprint(), g.Fingerprint())
	}
}

// TestGeneratedDiagramExpandsChild: a generated program draws the child
// its New was given inside its subgraph node when asked to expand
// children, and the plain diagram is the document's §9.1 picture.
func TestGeneratedDiagramExpandsChild(t *testing.T) {
	g, err := deskgraph.New(desk{&runs{}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := runtime.Mermaid(g, mermaid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	expanded, err := runtime.Mermaid(g, mermaid.Options{ExpandSubgraphs: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "subgraph ") {
		t.Errorf("the plain diagram expands a child:\n%s", plain)
	}
	if !strings.Contains(expanded, "subgraph ") || !strings.Contains(expanded, "approve") {
		t.Errorf("the expanded diagram does not draw the refund child:\n%s", expanded)
	}
}

// TestThreadMermaidMarksInsideChild: the thread picture of a thread paused
// inside the child marks the child's waiting node inside its block.
func TestThreadMermaidMarksInsideChild(t *testing.T) {
	cp := checkpoint.NewMemory()
	g, err := deskgraph.New(desk{&runs{}})
	if err != nil {
		t.Fatal(err)
	}
	th := g.Thread(cp, "t1")
	if _, err := th.Invoke(context.Background(), deskgraph.Update{Order: new("A7")}); err != nil {
		t.Fatal(err)
	}
	ts, err := th.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expand bool
		want   string
	}{{false, "class refund pending"}, {true, "class refund,refund_approve pending"}} {
		out, err := runtime.ThreadMermaid(g, ts, mermaid.Options{ExpandSubgraphs: tc.expand})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("expand=%v: want %q in\n%s", tc.expand, tc.want, out)
		}
	}
}
