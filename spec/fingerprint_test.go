package spec

import (
	"regexp"
	"strings"
	"testing"
)

const fpBase = `{
  "name": "approval",
  "channels": {"draft": {}, "log": {"reducer": "append"}, "ok": {"reducer": "last_write"}},
  "nodes": [
    {"id": "write", "type": "llm", "config": {"model": "m", "temperature": 0.5, "tools": ["a", "b"]}},
    {"id": "review", "type": "human"}
  ],
  "edges": [
    {"from": "__start__", "to": "write"},
    {"from": "write", "to": "review"},
    {"from": "review", "to": "__end__", "when": {"channel": "ok", "eq": true}},
    {"from": "review", "to": "write", "when": {"channel": "ok", "eq": false}}
  ]
}`

func mustDecode(t *testing.T, doc string) *Graph {
	t.Helper()
	g, diags := Decode("doc.json", []byte(doc))
	if diags.HasErrors() {
		t.Fatalf("decode: %v\n%s", diags.Err(), doc)
	}
	return g
}

func TestFingerprint(t *testing.T) {
	base := mustDecode(t, fpBase).Fingerprint()
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(base) {
		t.Fatalf("fingerprint %q is not sha256:<64 hex>", base)
	}
	same := []struct{ name, doc string }{
		{"reordered keys and reformatted", `{"edges":[{"to":"write","from":"__start__"},{"from":"write","to":"review"},
			{"when":{"eq":true,"channel":"ok"},"to":"__end__","from":"review"},{"from":"review","to":"write","when":{"channel":"ok","eq":false}}],
			"nodes":[{"type":"llm","id":"write","config":{"tools":["a","b"],"temperature":5e-1,"model":"m"}},{"id":"review","type":"human"}],
			"channels":{"ok":{},"log":{"reducer":"append"},"draft":{"reducer":"last_write"}},"name":"approval"}`},
		{"x- members everywhere and $schema", `{
  "$schema": "https://example.com/ilmek.schema.json", "x-canvas": {"zoom": 2},
  "name": "approval",
  "channels": {"draft": {"x-note": "n"}, "log": {"reducer": "append"}, "ok": {"reducer": "last_write"}},
  "nodes": [
    {"id": "write", "type": "llm", "x-pos": [10, 20], "config": {"model": "m", "temperature": 0.5, "tools": ["a", "b"]}},
    {"id": "review", "type": "human", "x-pos": [30, 40]}
  ],
  "edges": [
    {"from": "__start__", "to": "write", "x-label": "go"},
    {"from": "write", "to": "review"},
    {"from": "review", "to": "__end__", "when": {"channel": "ok", "eq": true, "x-why": "done"}},
    {"from": "review", "to": "write", "when": {"channel": "ok", "eq": false}}
  ]
}`},
	}
	for _, tc := range same {
		t.Run("same/"+tc.name, func(t *testing.T) {
			if got := mustDecode(t, tc.doc).Fingerprint(); got != base {
				t.Errorf("fingerprint changed: %s, want %s", got, base)
			}
		})
	}
	// Moving x- data from one node to another is no change either.
	a := mustDecode(t, `{"nodes":[{"id":"a","type":"t","x-p":1},{"id":"b","type":"t"}],"edges":[{"from":"__start__","to":"a"}]}`)
	b := mustDecode(t, `{"nodes":[{"id":"a","type":"t"},{"id":"b","type":"t","x-p":1}],"edges":[{"from":"__start__","to":"a"}]}`)
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("moving an x- member from one node to another changed the fingerprint")
	}

	differ := []struct{ name, from, to string }{
		{"name", `"name": "approval"`, `"name": "approval2"`},
		{"reducer", `"log": {"reducer": "append"}`, `"log": {"reducer": "merge"}`},
		{"channel renamed", `"draft": {}`, `"drafts": {}`},
		{"node type", `"type": "human"`, `"type": "human2"`},
		{"node id", `{"id": "review", "type": "human"}`, `{"id": "review", "type": "human"}, {"id": "extra", "type": "human"}`},
		{"config value", `"temperature": 0.5`, `"temperature": 0.6`},
		{"config x- member", `"temperature": 0.5`, `"temperature": 0.5, "x-k": 1`},
		{"config array order", `["a", "b"]`, `["b", "a"]`},
		{"predicate literal", `"eq": true}`, `"eq": "true"}`},
		{"predicate operator", `"ok", "eq": false`, `"ok", "neq": true`},
		{"edge target", `{"from": "write", "to": "review"}`, `{"from": "write", "to": "__end__"}`},
	}
	for _, tc := range differ {
		t.Run("differs/"+tc.name, func(t *testing.T) {
			doc := replaceOnce(t, fpBase, tc.from, tc.to)
			if got := mustDecode(t, doc).Fingerprint(); got == base {
				t.Errorf("fingerprint did not change")
			}
		})
	}
	// The node order is the reduce order: swapping two nodes is a change.
	swapped := mustDecode(t, `{"nodes":[{"id":"b","type":"t"},{"id":"a","type":"t"}],"edges":[{"from":"__start__","to":"a"}]}`)
	if swapped.Fingerprint() == b.Fingerprint() {
		t.Error("swapping two nodes did not change the fingerprint")
	}
}

func replaceOnce(t *testing.T, s, from, to string) string {
	t.Helper()
	i := strings.Index(s, from)
	if i < 0 {
		t.Fatalf("%q not in document", from)
	}
	return s[:i] + to + s[i+len(from):]
}
