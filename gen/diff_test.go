package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/ilmek-go/ilmek/spec"
)

// changedLines counts the lines of a that b lacks and of b that a lacks,
// counting repeats: a line-based diff's size, without its alignment.
func changedLines(a, b string) int {
	count := map[string]int{}
	for _, l := range strings.Split(a, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(b, "\n") {
		count[l]--
	}
	n := 0
	for _, c := range count {
		n += max(c, -c)
	}
	return n
}

// TestSmallDocumentChangeSmallDiff generates a 200-node document and the
// same document with one line changed, and expects the generated code to
// differ in a few lines: the embedded document is one line per document
// line, tables are one element per line, and no line grows with the
// document.
func TestSmallDocumentChangeSmallDiff(t *testing.T) {
	doc := func(model string, limit int) string {
		var b strings.Builder
		b.WriteString(`{"name": "diff", "channels": {"n": {}, "log": {"reducer": "append"}}, "nodes": [`)
		for i := range 200 {
			if i > 0 {
				b.WriteString(",")
			}
			m := "small"
			if i == 100 {
				m = model
			}
			fmt.Fprintf(&b, `{"id": "s%d", "type": "llm", "config": {"model": %q, "tools": ["a", "b"]}}`, i, m)
		}
		b.WriteString(`], "edges": [{"from": "__start__", "to": "s0"}`)
		for i := 1; i < 200; i++ {
			fmt.Fprintf(&b, `, {"from": "s%d", "to": "s%d", "when": {"channel": "n", "lt": %d}}`, i-1, i, limit+i)
		}
		b.WriteString(`, {"from": "s199", "to": "__end__"}]}`)
		return b.String()
	}
	gen := func(text string) map[string]string {
		g, ds := spec.Decode("diff.json", []byte(text))
		if ds.HasErrors() {
			t.Fatal(ds)
		}
		files, ds := Generate(g, Options{Package: "diffgraph", PkgPath: "example.com/diffgraph", Source: "diff.json"})
		if ds.HasErrors() {
			t.Fatal(ds)
		}
		out := map[string]string{}
		for _, f := range files {
			out[f.Name] = string(f.Data)
			for i, l := range strings.Split(string(f.Data), "\n") {
				if len(l) > 200 {
					t.Errorf("%s:%d is %d characters long", f.Name, i+1, len(l))
				}
			}
		}
		return out
	}
	base := gen(doc("large", 1000))
	for _, tc := range []struct {
		name string
		doc  string
		max  int // changed lines over every file
	}{
		// The document's line and the config literal's line in New.
		{"config value", doc("medium", 1000), 4},
		// The guard's line in the document; in program.gen.go the edge's
		// comment in Plan and the predicate spec.Predicate.Holds evaluates (its
		// comment and its literal) for a channel typed any.
		{"guard literal", strings.Replace(doc("large", 1000), `"lt": 1100}`, `"lt": 1234}`, 1), 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.doc == doc("large", 1000) {
				t.Fatal("the change did not apply")
			}
			got := gen(tc.doc)
			total := 0
			for name, data := range got {
				n := changedLines(base[name], data)
				total += n
				if n > 0 {
					t.Logf("%s: %d lines changed", name, n)
				}
			}
			if total == 0 || total > tc.max {
				t.Errorf("a one-line change of the document changed %d generated lines, want 1..%d", total, tc.max)
			}
		})
	}
}

// TestSpecLiteral checks that the embedded document is a raw string when it
// can be and an interpreted one when a raw string cannot hold it.
func TestSpecLiteral(t *testing.T) {
	for _, tc := range []struct {
		text string
		raw  bool
	}{
		{"{\n  \"a\": \"b\"\n}\n", true},
		{"{\n  \"a\": \"`\"\n}\n", false},
		{"{\r\n}\n", false},
		{"{\"\x00\"}", false},
		{"{\"\ufeff\"}", false},
		{"{\"\xff\"}", false},
		{"{\n  \"é\\u0000\"\n}\n", true},
	} {
		got := fmt.Sprintf("%#v", jen.Const().Id("x").Op("=").Add(specLiteral(tc.text)))
		if raw := strings.Contains(got, "`"+tc.text+"`"); raw != tc.raw {
			t.Errorf("%q: got %s, want raw %v", tc.text, got, tc.raw)
		}
	}
}
