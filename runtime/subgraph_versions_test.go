package runtime_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// versionedChild is child graph "c": node "ask" (its config holds the
// prompt) asks a person; with extra, node "after" follows it.
func versionedChild(t *testing.T, prompt string, extra bool) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	b := runtime.NewBuilder("c").Channel("x", "").
		TypedNode("ask", "ask", map[string]any{"prompt": prompt}, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			v, err := runtime.Interrupt[string](ctx, prompt)
			return runtime.Values{"x": v}, err
		}).Edge(spec.Start, "ask")
	if extra {
		b.TypedNode("after", "noop", nil, noop).Edge("ask", "after").Edge("after", spec.End)
	} else {
		b.Edge("ask", spec.End)
	}
	return mustCompile(t, b)
}

// versionedParent is graph "p": node "gate" asks a person, then
// subgraph node "s" runs child. kind "spec" builds it from its document.
func versionedParent(t *testing.T, kind string, child runtime.Child) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	gate := func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		_, err := runtime.Interrupt[string](ctx, "go?")
		return nil, err
	}
	code := mustCompile(t, runtime.NewBuilder("p").Channel("x", "").
		TypedNode("gate", "gate", nil, gate).
		Subgraph("s", child, nil, map[string]string{"x": "x"}).
		Edge(spec.Start, "gate").Edge("gate", "s").Edge("s", spec.End))
	if kind == "code" {
		return code
	}
	doc := mustSpec(t, code)
	g, err := runtime.FromSpec(doc, runtime.Registry{"gate": func(spec.Node) (runtime.NodeFunc, error) { return gate, nil }}, runtime.WithSubgraphs(child))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSubgraphVersions: a parent's version covers the children it runs,
// and a new version of a child is, for the compatibility rule and for
// AffectedThreads, a changed config of the subgraph node that runs it,
// at any depth; threads not paused in that node are not touched.
func TestSubgraphVersions(t *testing.T) {
	ctx := context.Background()
	nested := func(_ string, leaf runtime.Child) runtime.Child {
		mid := mustCompile(t, runtime.NewBuilder("mid").Channel("x", "").
			Subgraph("inner", leaf, nil, map[string]string{"x": "x"}).Edge(spec.Start, "inner").Edge("inner", spec.End))
		return mid
	}
	direct := func(_ string, c runtime.Child) runtime.Child { return c }
	tests := []struct {
		name       string
		wrap       func(kind string, c runtime.Child) runtime.Child
		next       *runtime.Graph[runtime.Values, runtime.Values] // the new child; the old is versionedChild(t, "v1", false)
		inChild    bool                                           // pause inside the child, not at gate
		sameFP     bool
		refuse     bool
		wantIDs    []string // AffectedThreads' Pending; nil: not reported
		wantPrompt string   // what the resumed child's ask returns
	}{
		{name: "same child rebuilt", wrap: direct, next: versionedChild(t, "v1", false), inChild: true, sameFP: true},
		{name: "paused node of the child reconfigured", wrap: direct, next: versionedChild(t, "v2", false), inChild: true, refuse: true, wantIDs: []string{"s/ask:interrupt#0"}},
		{name: "node added after the paused one", wrap: direct, next: versionedChild(t, "v1", true), inChild: true, refuse: true, wantIDs: []string{"s/ask:interrupt#0"}},
		{name: "child changed, thread paused before the subgraph", wrap: direct, next: versionedChild(t, "v2", false)},
		{name: "child two levels down changed", wrap: nested, next: versionedChild(t, "v1", true), inChild: true, refuse: true, wantIDs: []string{"s/inner/ask:interrupt#0"}},
		{name: "child two levels down rebuilt", wrap: nested, next: versionedChild(t, "v1", false), inChild: true, sameFP: true},
	}
	for _, kind := range []string{"code", "spec"} {
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				oldG := versionedParent(t, kind, tt.wrap(kind, versionedChild(t, "v1", false)))
				newG := versionedParent(t, kind, tt.wrap(kind, tt.next))
				if same := oldG.Fingerprint() == newG.Fingerprint(); same != tt.sameFP {
					t.Fatalf("parent fingerprints equal = %v, want %v: the parent's version must cover its children", same, tt.sameFP)
				}
				store := checkpoint.NewMemory()
				res, err := oldG.Thread(store, "v").Invoke(ctx, nil)
				if err != nil || res.Status != runtime.StatusInterrupted || res.Pending[0].ID != "gate:interrupt#0" {
					t.Fatalf("first run: %+v %v", res, err)
				}
				if tt.inChild {
					res, err = oldG.Thread(store, "v").Resume(ctx, runtime.Answer("go"))
					if err != nil || res.Status != runtime.StatusInterrupted || !strings.HasPrefix(res.Pending[0].ID, "s/") {
						t.Fatalf("into the child: %+v %v", res, err)
					}
				}
				affected, err := runtime.AffectedThreads(ctx, store, oldG, newG)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case tt.wantIDs == nil && len(affected) != 0:
					t.Errorf("AffectedThreads reports %+v, want none", affected)
				case tt.wantIDs != nil && (len(affected) != 1 || !slices.Equal(affected[0].Nodes, []string{"s"}) || !slices.Equal(affected[0].Pending, tt.wantIDs) || affected[0].Incompatible == nil):
					t.Errorf("AffectedThreads reports %+v, want node s waiting at %v, incompatible", affected, tt.wantIDs)
				}

				if tt.inChild {
					res, err = newG.Thread(store, "v").Resume(ctx, runtime.Answer("ok"))
				} else {
					if res, err = newG.Thread(store, "v").Resume(ctx, runtime.Answer("go")); err == nil {
						res, err = newG.Thread(store, "v").Resume(ctx, runtime.Answer("ok"))
					}
				}
				var ie *runtime.IncompatibleError
				if got := errors.As(err, &ie); got != tt.refuse {
					t.Fatalf("resume on the new version: refused = %v, want %v: %+v %v", got, tt.refuse, res, err)
				}
				if tt.refuse {
					r := ie.Reasons
					if len(r) != 1 || r[0].Kind != runtime.ReasonNodeConfig || r[0].Subject != "s" || !strings.Contains(r[0].Msg, tt.wantIDs[0]) {
						t.Fatalf("reasons: %+v", r)
					}
					if res.Supersteps != 0 {
						t.Fatalf("a refused resume ran %d supersteps", res.Supersteps)
					}
					return
				}
				if res.Status != runtime.StatusDone || res.State["x"] != "ok" {
					t.Fatalf("resume: %+v", res)
				}
			})
		}
	}
}

// TestSubgraphFingerprintPins: a runtime graph's fingerprint is its
// document's with every child pinned (spec.PinSubgraphs), so a document
// that pins its child keeps its fingerprint, and one that does not gets
// the fingerprint of its pinned form.
func TestSubgraphFingerprintPins(t *testing.T) {
	child := versionedChild(t, "v1", false)
	for _, tt := range []struct {
		name, pin string
	}{
		{"pinned", `, "fingerprint": "` + child.Fingerprint() + `"`},
		{"unpinned", ``},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, diags := spec.Decode("p.json", []byte(`{"name": "p", "channels": {"x": {}},
  "nodes": [{"id": "s", "type": "subgraph", "config": {"graph": "c"`+tt.pin+`, "out": {"x": "x"}}}],
  "edges": [{"from": "__start__", "to": "s"}, {"from": "s", "to": "__end__"}]}`))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			g, err := runtime.FromSpec(d, runtime.Registry{}, runtime.WithSubgraphs(child))
			if err != nil {
				t.Fatal(err)
			}
			pinned := spec.PinSubgraphs(d, map[string]string{"c": child.Fingerprint()})
			if g.Fingerprint() != pinned.Fingerprint() {
				t.Errorf("fingerprint %s, want the pinned form's %s", g.Fingerprint(), pinned.Fingerprint())
			}
			if (g.Fingerprint() == d.Fingerprint()) != (tt.pin != "") {
				t.Errorf("fingerprint %s against the document's %s", g.Fingerprint(), d.Fingerprint())
			}
			if back := mustSpec(t, g); !spec.Equal(back, d) {
				t.Error("ToSpec does not give the document back as written")
			}
		})
	}
}

// TestCompatibleSubgraphPins applies the compatibility rule to a thread
// paused inside subgraph node "s" across stored forms whose "s" configs
// differ: a new child version alone is a changed config naming the child
// and where the thread waits; a form without a pin says nothing of the
// child's version; any other config change is the plain changed config.
func TestCompatibleSubgraphPins(t *testing.T) {
	form := func(config string) []byte {
		return []byte(`{"channels": {"x": {}}, "nodes": [{"id": "s", "type": "subgraph", "config": ` + config + `}]}`)
	}
	cp := &runtime.Checkpoint{ID: "k", Channels: []byte(`{"x": "a"}`),
		Next:    []checkpoint.TaskRef{{Node: "s", Key: "s"}},
		Pending: []runtime.PendingInterrupt{{ID: "s/ask:interrupt#0", Node: "s"}}}
	tests := []struct {
		name, old, new string
		want           string // "" compatible; else a text of the one reason's Msg
	}{
		{"same pin", `{"graph": "c", "fingerprint": "sha256:1"}`, `{"graph": "c", "fingerprint": "sha256:1"}`, ""},
		{"new child version", `{"graph": "c", "fingerprint": "sha256:1"}`, `{"graph": "c", "fingerprint": "sha256:2"}`, `runs graph "c", now at version sha256:2; the thread waits inside it (s/ask:interrupt#0)`},
		{"old form unpinned", `{"graph": "c"}`, `{"graph": "c", "fingerprint": "sha256:2"}`, ""},
		{"new form unpinned", `{"graph": "c", "fingerprint": "sha256:1"}`, `{"graph": "c"}`, ""},
		{"unpinned, mapping changed", `{"graph": "c"}`, `{"graph": "c", "fingerprint": "sha256:2", "out": {"x": "y"}}`, "another config"},
		{"new version and mapping changed", `{"graph": "c", "fingerprint": "sha256:1"}`, `{"graph": "c", "fingerprint": "sha256:2", "in": {"x": "x"}}`, "another config"},
		{"another child graph", `{"graph": "c", "fingerprint": "sha256:1"}`, `{"graph": "d", "fingerprint": "sha256:1"}`, "another config"},
		{"own limit changed", `{"graph": "c", "fingerprint": "sha256:1"}`, `{"graph": "c", "fingerprint": "sha256:1", "limit": 9}`, "another config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runtime.Compatible(cp, form(tt.old), form(tt.new))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ie *runtime.IncompatibleError
			if !errors.As(err, &ie) || len(ie.Reasons) != 1 || ie.Reasons[0].Kind != runtime.ReasonNodeConfig || ie.Reasons[0].Subject != "s" || !strings.Contains(ie.Reasons[0].Msg, tt.want) {
				t.Fatalf("err = %v, want one node-config-changed reason for s saying %q", err, tt.want)
			}
		})
	}
}

// TestSubgraphPinnedFingerprintsMatchRuntime: spec.PinnedFingerprints over
// a parent's document and its children's, two levels deep, gives the
// fingerprint the runtime gives the parent, so tools see the versions the
// runtime records.
func TestSubgraphPinnedFingerprintsMatchRuntime(t *testing.T) {
	leaf := versionedChild(t, "v1", false)
	mid := mustCompile(t, runtime.NewBuilder("mid").Channel("x", "").
		Subgraph("inner", leaf, nil, map[string]string{"x": "x"}).Edge(spec.Start, "inner").Edge("inner", spec.End))
	top := versionedParent(t, "code", mid)
	fps := spec.PinnedFingerprints(mustSpec(t, top), mustSpec(t, mid), mustSpec(t, leaf))
	for name, g := range map[string]runtime.Version{"p": top, "mid": mid, "c": leaf} {
		if fps[name] != g.Fingerprint() {
			t.Errorf("%s: PinnedFingerprints %s, runtime %s", name, fps[name], g.Fingerprint())
		}
	}
}
