package studio_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/spec"
	"github.com/ilmek-go/ilmek/studio"
)

// child: a graph that says its greeting and appends it to its log.
const child = `{"name":"child","channels":{"greeting":{},"log":{"reducer":"append"}},
 "nodes":[{"id":"hi","type":"say","config":{"text":"hi"}}],
 "edges":[{"from":"__start__","to":"hi"},{"from":"hi","to":"__end__"}]}`

// parent runs child through node "sub"; SUB is replaced by its config.
const parent = `{"name":"parent","channels":{"topic":{},"log":{"reducer":"append"},"said":{"reducer":"append"}},
 "nodes":[{"id":"sub","type":"subgraph","config":SUB}],
 "edges":[{"from":"__start__","to":"sub"},{"from":"sub","to":"__end__"}]}`

func withSub(cfg string) string { return strings.Replace(parent, "SUB", cfg, 1) }

// TestSubgraphChecks: a subgraph node is checked against the published
// versions the principal may view, each problem placed on the node with
// its hint, as runtime.FromSpec would refuse it.
func TestSubgraphChecks(t *testing.T) {
	s := newStudio(t, nil)
	c := s.create("ann", "child", child)
	s.create("bob", "bobs", strings.Replace(child, `"name":"child"`, `"name":"bobs"`, 1))
	var before studio.Report
	s.must("ann", "POST", "/api/check", map[string]any{"source": withSub(`{"graph":"child"}`)}, 200).json(t, &before)
	if before.Errors != 1 || !strings.Contains(before.Diagnostics[0].Hint, "publish the child document") {
		t.Fatalf("before the child is published: %+v", before.Diagnostics)
	}
	s.must("ann", "POST", "/api/documents/"+c.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)
	var bobs struct {
		Documents []studio.Document `json:"documents"`
	}
	s.must("bob", "GET", "/api/documents", nil, 200).json(t, &bobs)
	s.must("bob", "POST", "/api/documents/"+bobs.Documents[0].ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)

	var fp struct {
		Children []studio.Child `json:"children"`
	}
	s.must("ann", "GET", "/api/subgraphs", nil, 200).json(t, &fp)
	if len(fp.Children) != 1 || fp.Children[0].Graph != "child" || fp.Children[0].Version != 1 || fp.Children[0].Document != c.ID ||
		len(fp.Children[0].Channels) != 2 || fp.Children[0].Channels[1] != (studio.ChildChannel{Name: "log", Reducer: "append"}) {
		t.Fatalf("ann's children (bob's document is not hers to see): %+v", fp.Children)
	}
	pin := fp.Children[0].Fingerprint

	cases := []struct {
		name, cfg string
		path      string // "" for no error
		hint      string
	}{
		{"mapped", `{"graph":"child","in":{"greeting":"topic"},"out":{"said":"log"}}`, "", ""},
		{"pinned", `{"graph":"child","fingerprint":"` + pin + `","in":{"greeting":"topic"}}`, "", ""},
		{"a typo in the child's name", `{"graph":"chid"}`, "nodes[0].config.graph", `"child"`},
		{"a child ann may not view", `{"graph":"bobs"}`, "nodes[0].config.graph", ""},
		{"an unknown child channel", `{"graph":"child","in":{"greting":"topic"}}`, "nodes[0].config.in.greting", "child"},
		{"an unknown parent channel", `{"graph":"child","out":{"sed":"log"}}`, "nodes[0].config.out.sed", "declare"},
		{"a stale pin", `{"graph":"child","fingerprint":"0000"}`, "nodes[0].config.fingerprint", "pin"},
		{"reducers that disagree", `{"graph":"child","in":{"log":"topic"}}`, "nodes[0].config.in.log", "reducer"},
		{"a graph that contains itself", `{"graph":"parent"}`, "nodes[0].config.graph", "cycle"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var rep studio.Report
			s.must("ann", "POST", "/api/check", map[string]any{"source": withSub(tc.cfg)}, 200).json(t, &rep)
			if tc.path == "" {
				if rep.Errors != 0 || rep.Fingerprint == "" {
					t.Fatalf("want no errors: %+v", rep.Diagnostics)
				}
				return
			}
			for _, d := range rep.Diagnostics {
				if d.Severity == "error" && d.Path == tc.path && d.Node == "sub" && d.Line > 0 && strings.Contains(d.Hint, tc.hint) {
					return
				}
			}
			t.Fatalf("no error at %s on node sub with hint %q: %+v", tc.path, tc.hint, rep.Diagnostics)
		})
	}
}

// TestSubgraphPublish: a parent with a subgraph node publishes over a
// version with a paused-threads store (the review builds both versions
// with their children), and the published parent runs its child.
func TestSubgraphPublish(t *testing.T) {
	cp := checkpoint.NewMemory()
	s := newStudio(t, func(c *studio.Config) { c.Checkpointer = cp })
	c := s.create("ann", "child", child)
	s.must("ann", "POST", "/api/documents/"+c.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)
	p := s.create("ann", "parent", withSub(`{"graph":"child","out":{"said":"log"}}`))
	s.must("ann", "POST", "/api/documents/"+p.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)
	p2 := s.save("ann", p, withSub(`{"graph":"child","in":{"greeting":"topic"},"out":{"said":"log"}}`))
	var rv studio.Review
	s.must("ann", "GET", "/api/documents/"+p.ID+"/review", nil, 200).json(t, &rv)
	if rv.Revision != p2.Revision || len(rv.Errors) != 0 || len(rv.Changes) == 0 {
		t.Fatalf("review: %+v", rv)
	}
	s.must("ann", "POST", "/api/documents/"+p.ID+"/publish", map[string]any{"revision": p2.Revision, "published": 1, "confirm_unsafe": true}, 200)

	ctx := context.Background()
	kid, err := runtime.Load("child.json", []byte(child), registry())
	if err != nil {
		t.Fatal(err)
	}
	body := s.must("ann", "GET", "/api/published/parent", nil, 200).body
	g, err := runtime.Load("parent.json", body, registry(), runtime.WithSubgraphs(kid))
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(ctx, runtime.Values{"topic": "x"})
	if err != nil || res.Status != runtime.StatusDone || fmt.Sprint(res.State["said"]) != "[hi]" {
		t.Fatalf("running the published parent: %v %v %v", res.Status, res.State, err)
	}
}

// TestSubgraphStalePin: a published parent pinned to a child version that
// has been replaced since cannot be built for the review; the review says
// so as an unsafe change instead of failing, and the re-pinned parent
// publishes once that is confirmed.
func TestSubgraphStalePin(t *testing.T) {
	s := newStudio(t, func(c *studio.Config) { c.Checkpointer = checkpoint.NewMemory() })
	c := s.create("ann", "child", child)
	s.must("ann", "POST", "/api/documents/"+c.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)
	var kids struct {
		Children []studio.Child `json:"children"`
	}
	s.must("ann", "GET", "/api/subgraphs", nil, 200).json(t, &kids)
	p := s.create("ann", "parent", withSub(`{"graph":"child","fingerprint":"`+kids.Children[0].Fingerprint+`"}`))
	s.must("ann", "POST", "/api/documents/"+p.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)

	c2 := s.save("ann", c, strings.Replace(child, `"text":"hi"`, `"text":"hello"`, 1))
	s.must("ann", "POST", "/api/documents/"+c.ID+"/publish", map[string]any{"revision": c2.Revision, "published": 1, "confirm_unsafe": true}, 200)
	s.must("ann", "GET", "/api/subgraphs", nil, 200).json(t, &kids)
	p2 := s.save("ann", p, withSub(`{"graph":"child","fingerprint":"`+kids.Children[0].Fingerprint+`"}`))
	if p2.Report.Errors != 0 {
		t.Fatalf("the re-pinned parent: %+v", p2.Report.Diagnostics)
	}
	var rv studio.Review
	s.must("ann", "GET", "/api/documents/"+p.ID+"/review", nil, 200).json(t, &rv)
	unchecked := false
	for _, ch := range rv.Changes {
		unchecked = unchecked || (ch.Kind == "unchecked" && ch.UnsafePaused && strings.Contains(ch.Detail, "cannot be built"))
	}
	if !rv.Unsafe || !unchecked {
		t.Fatalf("review: %+v", rv)
	}
	problem(t, s.do("ann", "POST", "/api/documents/"+p.ID+"/publish", map[string]any{"revision": p2.Revision, "published": 1}), 409, "unsafe-change")
	s.must("ann", "POST", "/api/documents/"+p.ID+"/publish", map[string]any{"revision": p2.Revision, "published": 1, "confirm_unsafe": true}, 200)
}

// TestSubgraphOwnFactory: an application that registers "subgraph"
// itself builds such nodes with its factory, as runtime.FromSpec does:
// the studio offers no children and runs no subgraph checks.
func TestSubgraphOwnFactory(t *testing.T) {
	s := newStudio(t, func(c *studio.Config) { c.Registry["subgraph"] = c.Registry["ask"] })
	c := s.create("ann", "child", child)
	s.must("ann", "POST", "/api/documents/"+c.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)
	var kids struct {
		Children []studio.Child `json:"children"`
	}
	s.must("ann", "GET", "/api/subgraphs", nil, 200).json(t, &kids)
	if kids.Children == nil || len(kids.Children) != 0 {
		t.Fatalf("children with an own subgraph factory: %+v", kids.Children)
	}
	var rep studio.Report
	s.must("ann", "POST", "/api/check", map[string]any{"source": withSub(`{"graph":"nowhere"}`)}, 200).json(t, &rep)
	if rep.Errors != 0 {
		t.Fatalf("the application's factory accepts any config: %+v", rep.Diagnostics)
	}
}

// BenchmarkCheckSubgraph: live checking of a parent with a subgraph node
// in a repository of 200 published documents (their decoded versions
// cached after the first check).
func BenchmarkCheckSubgraph(b *testing.B) {
	ctx := context.Background()
	repo := studio.NewMemory()
	for i := range 200 {
		name := fmt.Sprintf("child%03d", i)
		src := strings.Replace(child, `"name":"child"`, `"name":"`+name+`"`, 1)
		d, err := repo.Create(ctx, studio.Document{ID: name, Name: name, Owner: "ann"}, studio.Revision{Body: []byte(src)})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := repo.Publish(ctx, 0, studio.Version{Document: d.ID, Revision: 1, Fingerprint: name, Body: []byte(src)}); err != nil {
			b.Fatal(err)
		}
	}
	s, err := studio.New(studio.Config{Repository: repo, Registry: registry(), Authenticate: byHeader})
	if err != nil {
		b.Fatal(err)
	}
	src := []byte(withSub(`{"graph":"child100","in":{"greeting":"topic"},"out":{"said":"log"}}`))
	p := server.Principal{ID: "ann"}
	for b.Loop() {
		rep, err := s.Check(ctx, p, "parent.json", src)
		if err != nil || rep.Errors != 0 {
			b.Fatal(err, rep.Diagnostics)
		}
	}
}

// TestSubgraphNestedPin: a child that runs a subgraph itself is offered
// with the fingerprint the runtime versions it by (its document with its
// own child pinned), so a parent pinning the offered value checks clean,
// and its document's plain fingerprint is refused as a stale pin.
func TestSubgraphNestedPin(t *testing.T) {
	s := newStudio(t, nil)
	c := s.create("ann", "child", child)
	s.must("ann", "POST", "/api/documents/"+c.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)
	middle := strings.Replace(withSub(`{"graph":"child","out":{"said":"log"}}`), `"name":"parent"`, `"name":"middle"`, 1)
	m := s.create("ann", "middle", middle)
	s.must("ann", "POST", "/api/documents/"+m.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)

	var got struct {
		Children []studio.Child `json:"children"`
	}
	s.must("ann", "GET", "/api/subgraphs", nil, 200).json(t, &got)
	var offered string
	for _, ch := range got.Children {
		if ch.Graph == "middle" {
			offered = ch.Fingerprint
		}
	}
	doc, diags := spec.Decode("middle.json", []byte(middle))
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if offered == "" || offered == doc.Fingerprint() {
		t.Fatalf("middle offered with %q; its plain fingerprint is %q: want the pinned one", offered, doc.Fingerprint())
	}
	top := strings.Replace(withSub(`{"graph":"middle","fingerprint":"PIN"}`), `"name":"parent"`, `"name":"top"`, 1)
	for _, tc := range []struct {
		pin    string
		errors int
	}{{offered, 0}, {doc.Fingerprint(), 1}} {
		var rep studio.Report
		s.must("ann", "POST", "/api/check", map[string]any{"source": strings.Replace(top, "PIN", tc.pin, 1)}, 200).json(t, &rep)
		if rep.Errors != tc.errors {
			t.Errorf("pin %s: %d errors, want %d: %+v", tc.pin, rep.Errors, tc.errors, rep.Diagnostics)
		}
	}
}
