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
