package spec_test

import (
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// TestSubgraphConfigShape checks that Decode places every malformed config
// of a subgraph node (the channels and the child are the runtime's to
// check).
func TestSubgraphConfigShape(t *testing.T) {
	tests := []struct {
		name, node, path, msg string
	}{
		{"ok", `{"id": "s", "type": "subgraph", "config": {"graph": "g", "fingerprint": "f", "in": {"a": "b"}, "out": {"c": "d"}}}`, "", ""},
		{"no config", `{"id": "s", "type": "subgraph"}`, "nodes[0].type", "needs a config object"},
		{"null config", `{"id": "s", "type": "subgraph", "config": null}`, "nodes[0].config", "needs a config object"},
		{"no graph", `{"id": "s", "type": "subgraph", "config": {}}`, "nodes[0].config", "config.graph must name"},
		{"graph number", `{"id": "s", "type": "subgraph", "config": {"graph": 1}}`, "nodes[0].config.graph", "config.graph must name"},
		{"unknown member", `{"id": "s", "type": "subgraph", "config": {"graph": "g", "inn": {}}}`, "nodes[0].config.inn", `unknown config member "inn"`},
		{"fingerprint number", `{"id": "s", "type": "subgraph", "config": {"graph": "g", "fingerprint": 2}}`, "nodes[0].config.fingerprint", "must be a string"},
		{"in array", `{"id": "s", "type": "subgraph", "config": {"graph": "g", "in": []}}`, "nodes[0].config.in", "must be an object"},
		{"out empty name", `{"id": "s", "type": "subgraph", "config": {"graph": "g", "out": {"a": ""}}}`, "nodes[0].config.out.a", "both must be channel names"},
		{"limit", `{"id": "s", "type": "subgraph", "config": {"graph": "g", "limit": 40}}`, "", ""},
		{"limit zero", `{"id": "s", "type": "subgraph", "config": {"graph": "g", "limit": 0}}`, "nodes[0].config.limit", "must be a positive integer"},
		{"limit fraction", `{"id": "s", "type": "subgraph", "config": {"graph": "g", "limit": 2.5}}`, "nodes[0].config.limit", "must be a positive integer"},
		{"limit string", `{"id": "s", "type": "subgraph", "config": {"graph": "g", "limit": "9"}}`, "nodes[0].config.limit", "must be a positive integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `{"nodes": [` + tt.node + `], "edges": [{"from": "__start__", "to": "s"}]}`
			_, diags := spec.Decode("doc.json", []byte(doc))
			if tt.path == "" {
				if diags.HasErrors() {
					t.Fatal(diags.Err())
				}
				return
			}
			var found bool
			for _, d := range diags {
				if d.Severity == spec.SeverityError && d.Path == tt.path && strings.Contains(d.Message, tt.msg) && d.Pos.Line > 0 {
					found = true
				}
			}
			if !found {
				t.Fatalf("want an error at %s saying %q, got %v", tt.path, tt.msg, diags)
			}
		})
	}
}

// TestSubgraphPinsInCompare: PinSubgraphs pins every subgraph node naming
// a given child, and Compare of two pinned forms reports a new child
// version as a NodeConfigChanged of the node that runs it, unsafe for the
// threads paused in it, naming the child and both versions.
func TestSubgraphPinsInCompare(t *testing.T) {
	doc := func(config string) *spec.Graph {
		t.Helper()
		g, diags := spec.Decode("p.json", []byte(`{"name": "p", "channels": {"x": {}},
  "nodes": [{"id": "s", "type": "subgraph", "config": `+config+`}, {"id": "o", "type": "subgraph", "config": {"graph": "other"}}],
  "edges": [{"from": "__start__", "to": "s"}, {"from": "s", "to": "o"}, {"from": "o", "to": "__end__"}]}`))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return g
	}
	tests := []struct {
		name     string
		old, new *spec.Graph
		detail   string // "": no change
	}{
		{"same child", spec.PinSubgraphs(doc(`{"graph": "c"}`), map[string]string{"c": "sha256:1"}), spec.PinSubgraphs(doc(`{"graph": "c"}`), map[string]string{"c": "sha256:1"}), ""},
		{"pin of a pinned document is the document", doc(`{"graph": "c", "fingerprint": "sha256:1"}`), spec.PinSubgraphs(doc(`{"graph": "c", "fingerprint": "sha256:1"}`), map[string]string{"c": "sha256:1"}), ""},
		{"new child version", spec.PinSubgraphs(doc(`{"graph": "c"}`), map[string]string{"c": "sha256:1"}), spec.PinSubgraphs(doc(`{"graph": "c"}`), map[string]string{"c": "sha256:2"}), `subgraph node "s" runs another version of graph "c" (sha256:2, was sha256:1)`},
		{"pin changed in the document", doc(`{"graph": "c", "fingerprint": "sha256:1"}`), doc(`{"graph": "c", "fingerprint": "sha256:3"}`), `runs another version of graph "c"`},
		{"pin and mapping changed", doc(`{"graph": "c", "fingerprint": "sha256:1"}`), doc(`{"graph": "c", "fingerprint": "sha256:3", "out": {"x": "x"}}`), `node "s" has another config`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changes := spec.Compare(tt.old, tt.new)
			if tt.detail == "" {
				if len(changes) != 0 || tt.old.Fingerprint() != tt.new.Fingerprint() {
					t.Fatalf("changes %+v", changes)
				}
				return
			}
			if len(changes) != 1 || changes[0].Kind != spec.NodeConfigChanged || changes[0].Subject != "s" || !changes[0].UnsafePaused || !strings.Contains(changes[0].Detail, tt.detail) {
				t.Fatalf("changes %+v, want one node-config-changed of s saying %q", changes, tt.detail)
			}
		})
	}
	// Nodes naming other graphs are left as they are.
	p := spec.PinSubgraphs(doc(`{"graph": "c"}`), map[string]string{"c": "sha256:1"})
	if got := string(p.Nodes[1].Config); got != `{"graph": "other"}` {
		t.Errorf("node o's config became %s", got)
	}
}

// TestPinnedFingerprints: a document's version with its children of the
// set pinned, at any depth, is what SubgraphChildren gives a pin to match;
// a document without children of the set keeps its fingerprint.
func TestPinnedFingerprints(t *testing.T) {
	dec := func(doc string) *spec.Graph {
		t.Helper()
		g, diags := spec.Decode("d.json", []byte(doc))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return g
	}
	sub := func(name, child string) *spec.Graph {
		return dec(`{"name": "` + name + `", "nodes": [{"id": "s", "type": "subgraph", "config": {"graph": "` + child + `"}}],
  "edges": [{"from": "__start__", "to": "s"}, {"from": "s", "to": "__end__"}]}`)
	}
	leaf := dec(`{"name": "leaf", "nodes": [{"id": "a", "type": "t"}], "edges": [{"from": "__start__", "to": "a"}, {"from": "a", "to": "__end__"}]}`)
	mid, top := sub("mid", "leaf"), sub("top", "mid")
	midFP := spec.PinSubgraphs(mid, map[string]string{"leaf": leaf.Fingerprint()}).Fingerprint()
	topFP := spec.PinSubgraphs(top, map[string]string{"mid": midFP}).Fingerprint()
	for _, tt := range []struct {
		name string
		set  []*spec.Graph
		want map[string]string
	}{
		{"three levels", []*spec.Graph{top, mid, leaf}, map[string]string{"top": topFP, "mid": midFP, "leaf": leaf.Fingerprint()}},
		{"child missing from the set", []*spec.Graph{top, leaf}, map[string]string{"top": top.Fingerprint(), "leaf": leaf.Fingerprint()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := spec.PinnedFingerprints(tt.set...)
			views := spec.SubgraphChildren(tt.set...)
			for name, want := range tt.want {
				if got[name] != want || views[name].Fingerprint != want {
					t.Errorf("%s: PinnedFingerprints %s, SubgraphChildren %s, want %s", name, got[name], views[name].Fingerprint, want)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("got %d fingerprints, want %d", len(got), len(tt.want))
			}
		})
	}
}
