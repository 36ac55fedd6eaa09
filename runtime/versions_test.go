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

const approvalV1 = `{
  "name": "approval",
  "channels": {"decision": {}, "draft": {}, "log": {"reducer": "append"}},
  "nodes": [
    {"id": "write", "type": "writer", "config": {"text": "hello"}},
    {"id": "review", "type": "approval", "config": {"question": "ship it?"}}
  ],
  "edges": [
    {"from": "__start__", "to": "write"},
    {"from": "write", "to": "review"},
    {"from": "review", "to": "__end__", "when": {"channel": "decision", "eq": "yes"}},
    {"from": "review", "to": "write", "when": {"channel": "decision", "neq": "yes"}}
  ]
}`

// approvalRegistry: writer writes draft (from its config) and a log line;
// approval asks a question and writes the answer to decision.
func approvalRegistry() runtime.Registry {
	return runtime.Registry{
		"writer": func(n spec.Node) (runtime.NodeFunc, error) {
			return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
				return runtime.Values{"draft": string(n.Config), "log": "wrote"}, nil
			}, nil
		},
		"approval": func(n spec.Node) (runtime.NodeFunc, error) {
			return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
				ans, err := runtime.Interrupt[string](ctx, "ship it?")
				if err != nil {
					return nil, err
				}
				return runtime.Values{"decision": ans, "log": "reviewed"}, nil
			}, nil
		},
		"mail": func(n spec.Node) (runtime.NodeFunc, error) {
			return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
				return runtime.Values{"log": "mailed"}, nil
			}, nil
		},
	}
}

func loadGraph(t *testing.T, doc string) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.Load("approval.json", []byte(doc), approvalRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func edit(t *testing.T, doc string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(doc, pairs[i]) {
			t.Fatalf("%q not in document", pairs[i])
		}
		doc = strings.Replace(doc, pairs[i], pairs[i+1], 1)
	}
	return doc
}

// The six change kinds of a document under a thread paused in "review"
// (after "write" wrote draft and log): each resumes or is refused with the
// named reason, exactly as runtime.Compatible's rule says.
func TestChangedDocumentUnderPausedThread(t *testing.T) {
	cases := []struct {
		name   string
		newDoc func(t *testing.T) string
		want   runtime.ReasonKind // "" resumes
	}{
		{"a added node", func(t *testing.T) string {
			return edit(t, approvalV1,
				`{"id": "review", "type": "approval", "config": {"question": "ship it?"}}`,
				`{"id": "review", "type": "approval", "config": {"question": "ship it?"}}, {"id": "notify", "type": "mail"}`,
				`"to": "__end__", "when"`, `"to": "notify", "when"`,
				`"edges": [`, `"edges": [{"from": "notify", "to": "__end__"},`)
		}, ""},
		{"b removed node it is paused on", func(t *testing.T) string {
			return `{"name": "approval", "channels": {"decision": {}, "draft": {}, "log": {"reducer": "append"}},
				"nodes": [{"id": "write", "type": "writer", "config": {"text": "hello"}}],
				"edges": [{"from": "__start__", "to": "write"}, {"from": "write", "to": "__end__"}]}`
		}, runtime.ReasonNodeMissing},
		{"c renamed channel it holds", func(t *testing.T) string {
			return edit(t, approvalV1, `"draft": {}`, `"text": {}`)
		}, runtime.ReasonChannelMissing},
		{"c renamed channel it does not hold", func(t *testing.T) string {
			return strings.ReplaceAll(approvalV1, `"decision"`, `"verdict"`)
		}, "node-writes-removed-channel"},
		{"d changed reducer", func(t *testing.T) string {
			return edit(t, approvalV1, `"log": {"reducer": "append"}`, `"log": {"reducer": "merge"}`)
		}, runtime.ReasonReducer},
		{"e changed predicate", func(t *testing.T) string {
			return edit(t, approvalV1, `"eq": "yes"`, `"in": ["yes", "ok"]`)
		}, ""},
		{"f changed config of the paused node", func(t *testing.T) string {
			return edit(t, approvalV1, `"ship it?"`, `"ship it now?"`)
		}, runtime.ReasonNodeConfig},
		{"f changed config of another node", func(t *testing.T) string {
			return edit(t, approvalV1, `"hello"`, `"hi"`)
		}, ""},
		{"x- member only", func(t *testing.T) string {
			return edit(t, approvalV1, `"id": "review",`, `"id": "review", "x-pos": [1, 2],`)
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := checkpoint.NewMemory()
			v1 := loadGraph(t, approvalV1)
			res, err := v1.Thread(mem, "t1").Invoke(ctx, runtime.Values{})
			if err != nil || res.Status != runtime.StatusInterrupted {
				t.Fatalf("v1 run: %v %v", res.Status, err)
			}
			cp, err := mem.Get(ctx, "t1", "")
			if err != nil {
				t.Fatal(err)
			}
			if cp.Fingerprint != v1.Fingerprint() || cp.Format != checkpoint.Format {
				t.Fatalf("checkpoint records %q format %d, want %q format %d", cp.Fingerprint, cp.Format, v1.Fingerprint(), checkpoint.Format)
			}
			before, _ := mem.List(ctx, "t1", 0)
			outcome := func() checkpoint.ThreadOutcome {
				t.Helper()
				page, err := mem.ListThreads(ctx, checkpoint.ThreadQuery{})
				if err != nil || len(page.Threads) != 1 {
					t.Fatalf("threads %+v, %v", page.Threads, err)
				}
				return page.Threads[0].Outcome
			}
			paused := outcome()

			v2 := loadGraph(t, tc.newDoc(t))
			res, err = v2.Thread(mem, "t1").Resume(ctx, runtime.Answer("yes"))
			after, _ := mem.List(ctx, "t1", 0)
			if tc.want == "node-writes-removed-channel" {
				// Compatible for the thread (it holds no "decision"), but the
				// approval node still writes it: the change is unsafe for the
				// node code (ilmekgen diff: channel-removed, unsafe for new
				// threads), and the task fails.
				var re *runtime.ReduceError
				if !errors.As(err, &re) && !errors.As(res.Err, &re) {
					t.Fatalf("resume: %v %v, want a *ReduceError", res.Status, err)
				}
				return
			}
			if tc.want == "" {
				if err != nil || res.Status != runtime.StatusDone {
					t.Fatalf("resume on the new version: %v %v", res.Status, err)
				}
				latest, _ := mem.Get(ctx, "t1", "")
				if latest.Fingerprint != v2.Fingerprint() {
					t.Errorf("new checkpoints record %q, want the new version's %q", latest.Fingerprint, v2.Fingerprint())
				}
				return
			}
			var ie *runtime.IncompatibleError
			if !errors.As(err, &ie) || !errors.Is(err, runtime.ErrIncompatible) {
				t.Fatalf("resume: %v (status %v), want an *IncompatibleError", err, res.Status)
			}
			if len(ie.Reasons) != 1 || ie.Reasons[0].Kind != tc.want || ie.Reasons[0].Fix == "" {
				t.Errorf("reasons %+v, want one %s with a fix", ie.Reasons, tc.want)
			}
			if ie.From != v1.Fingerprint() || ie.To != v2.Fingerprint() || ie.ThreadID != "t1" {
				t.Errorf("error names %q -> %q on %q", ie.From, ie.To, ie.ThreadID)
			}
			if len(after) != len(before) {
				t.Errorf("a refused resume wrote %d checkpoints", len(after)-len(before))
			}
			if got := outcome(); got != paused {
				t.Errorf("a refused resume recorded the thread's outcome %+v, want its last run's %+v", got, paused)
			}
			// The thread still resumes on its own version.
			if res, err := v1.Thread(mem, "t1").Resume(ctx, runtime.Answer("yes")); err != nil || res.Status != runtime.StatusDone {
				t.Errorf("resume on the old version: %v %v", res.Status, err)
			}
		})
	}
}

func TestCodeBuiltFingerprintIsItsShape(t *testing.T) {
	build := func(reducer spec.Reducer, guard func(runtime.Values) bool) *runtime.Graph[runtime.Values, runtime.Values] {
		node := func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) { return runtime.Values{"x": 1}, nil }
		g, err := runtime.NewBuilder("code").Channel("x", reducer).TypedNode("a", "t", map[string]int{"n": 1}, node).
			Edge(spec.Start, "a").EdgeIf("a", spec.End, guard).Compile()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	always := func(runtime.Values) bool { return true }
	never := func(runtime.Values) bool { return false }
	a, b := build(spec.LastWrite, always), build(spec.LastWrite, always)
	if !strings.HasPrefix(a.Fingerprint(), runtime.ShapeFingerprintPrefix) {
		t.Fatalf("code-built graph with a Go guard: fingerprint %q, want the shape prefix", a.Fingerprint())
	}
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("the same code gives two fingerprints")
	}
	if build(spec.Append, always).Fingerprint() == a.Fingerprint() {
		t.Error("a changed reducer kept the fingerprint")
	}
	if build(spec.LastWrite, never).Fingerprint() == a.Fingerprint() {
		t.Error("another guard function kept the fingerprint")
	}
	// A storable code-built graph has its document's fingerprint.
	doc := mustLoadSpec(t, `{"name":"s","channels":{"x":{}},"nodes":[{"id":"a","type":"t"}],"edges":[{"from":"__start__","to":"a"}]}`)
	g, err := runtime.NewBuilder("s").Channel("x", spec.LastWrite).TypedNode("a", "t", nil,
		func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) { return nil, nil }).Edge(spec.Start, "a").Compile()
	if err != nil {
		t.Fatal(err)
	}
	if g.Fingerprint() != doc.Fingerprint() {
		t.Errorf("storable code-built graph: %q, want the document's %q", g.Fingerprint(), doc.Fingerprint())
	}
}

func mustLoadSpec(t *testing.T, doc string) *spec.Graph {
	t.Helper()
	g, diags := spec.Decode("doc.json", []byte(doc))
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	return g
}

// A set of versions runs each thread on the version that wrote it, new
// threads on the newest, and a thread of a dropped version on the newest
// only when compatible.
func TestVersionsPickTheThreadsVersion(t *testing.T) {
	ctx := context.Background()
	mem := checkpoint.NewMemory()
	v1 := loadGraph(t, approvalV1)
	v2 := loadGraph(t, edit(t, approvalV1, `"ship it?"`, `"ship it now?"`)) // config of the paused node
	run := func(g *runtime.Graph[runtime.Values, runtime.Values], thread string) {
		t.Helper()
		res, err := g.Thread(mem, thread).Invoke(ctx, runtime.Values{})
		if err != nil || res.Status != runtime.StatusInterrupted {
			t.Fatalf("run %s: %v %v", thread, res.Status, err)
		}
	}
	run(v1, "old")
	set, err := runtime.NewVersions(v1, v2)
	if err != nil {
		t.Fatal(err)
	}
	pick := func(thread string) runtime.Version {
		t.Helper()
		v, err := set.For(ctx, mem, thread)
		if err != nil {
			t.Fatalf("For(%s): %v", thread, err)
		}
		return v
	}
	if pick("old") != runtime.Version(v1) {
		t.Error("a thread of v1 does not get v1")
	}
	if pick("new") != runtime.Version(v2) {
		t.Error("a new thread does not get the newest version")
	}
	g := pick("old").(*runtime.Graph[runtime.Values, runtime.Values])
	if res, err := g.Thread(mem, "old").Resume(ctx, runtime.Answer("yes")); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume on the picked version: %v %v", res.Status, err)
	}
	// Without v1 in the set, the v1 thread paused in review is refused by
	// v2 (review's config changed), and a v1 thread paused nowhere
	// incompatible runs on v2.
	run(v1, "paused")
	only2, err := runtime.NewVersions(v2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := only2.For(ctx, mem, "paused"); !errors.Is(err, runtime.ErrIncompatible) {
		t.Errorf("For on a set without the thread's version: %v, want ErrIncompatible", err)
	}
	v3 := loadGraph(t, edit(t, approvalV1, `"hello"`, `"hi"`))
	only3, err := runtime.NewVersions(v3)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := only3.For(ctx, mem, "paused"); err != nil || v != runtime.Version(v3) {
		t.Errorf("For with a compatible newest: %v %v", v, err)
	}
	if _, err := runtime.NewVersions(v1, loadGraph(t, approvalV1)); err == nil {
		t.Error("two versions with one fingerprint were accepted")
	}
	other := loadGraph(t, edit(t, approvalV1, `"name": "approval"`, `"name": "other"`))
	if _, err := runtime.NewVersions(v1, other); err == nil {
		t.Error("versions of two graphs were accepted")
	}
}
