package graphviz

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/dot"
	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/spec"
)

// hostile are node ids (and so labels) meant to break the SVG or smuggle
// script into it.
var hostile = []string{
	"&nbsp;", "&amp;", "&#0;", "&#x41;", "&", "a & b", "&lt;script&gt;",
	"<script>alert(1)</script>", "<svg onload=alert(1)>", "<foreignObject>", `"><script>x</script>`,
	`"`, `'`, `"onmouseover="alert(1)`, "' onclick='x", "]]>", "<![CDATA[x]]>", "<!--", "-->",
	"javascript:alert(1)", "JaVaScRiPt:x", "xlink:href=javascript:x",
	"line\nbreak", "cr\rlf", "tab\there", "nul\x00byte", "esc\x1b[31m", "del\x7f", "c1\u0085",
	"bidi\u202eevil", "\u2066isolate\u2069", "zero\u200bwidth", "bom\ufeff", "\ufffe", "bad\xffutf8",
	`back\slash`, `\N`, `\G`, `\l`, "{}", "[label=x]", "a;b", "->", "--", "node", "edge", "graph", "strict",
	"__start__x", "%", "%s%n", "😀", "é", strings.Repeat("w", 300),
}

// checkSVG decodes svg as XML and refuses a script element, a
// foreignObject, an on* attribute or a javascript: URL; it returns the
// ids of the elements.
func checkSVG(t *testing.T, svg []byte) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	dec.Strict = true
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return ids
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v\n%s", err, svg)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if n := strings.ToLower(el.Name.Local); n == "script" || n == "foreignobject" {
			t.Fatalf("the SVG holds a %s element:\n%s", el.Name.Local, svg)
		}
		for _, a := range el.Attr {
			if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
				t.Fatalf("the SVG has an attribute %s=%q:\n%s", a.Name.Local, a.Value, svg)
			}
			if v := strings.ToLower(strings.TrimSpace(a.Value)); strings.HasPrefix(v, "javascript:") && (a.Name.Local == "href" || a.Name.Local == "src") {
				t.Fatalf("the SVG links %s=%q:\n%s", a.Name.Local, a.Value, svg)
			}
			if a.Name.Local == "id" {
				ids[a.Value] = true
			}
		}
	}
}

// TestHostileNodeIDs: every hostile node id, as a plain node, a pending
// one and an edge's end, gives well-formed SVG with no script, no
// foreignObject, no on* attribute and no javascript: URL, and the node's
// element keeps its id ("node_" and the name, as dot.Quote shows it).
func TestHostileNodeIDs(t *testing.T) {
	if testing.Short() {
		hostile = hostile[:12]
	}
	r := New()
	t.Cleanup(func() { r.Close() })
	for _, id := range hostile {
		t.Run("", func(t *testing.T) {
			g := mermaid.Graph{
				Nodes: []mermaid.Node{{ID: id}, {ID: "after"}},
				Edges: []mermaid.Edge{
					{Kind: mermaid.Static, From: spec.Start, To: id},
					{Kind: mermaid.Guard, From: id, To: "after"},
					{Kind: mermaid.Static, From: "after", To: spec.End},
				},
			}
			for _, h := range []*mermaid.Highlight{nil, {Pending: []string{id}}, {Next: []string{id}}} {
				svg, err := r.SVG(context.Background(), dot.Diagram(g, h))
				if err != nil {
					t.Fatalf("id %q: %v", id, err)
				}
				ids := checkSVG(t, svg)
				want := "node_" + shown(id)
				if !ids[want] {
					t.Fatalf("id %q: no element with id %q among %v", id, want, ids)
				}
			}
		})
	}
}

// shown is the name as the SVG holds it: dot.Quote's text, unescaped.
func shown(id string) string {
	q := dot.Quote(id)
	q = strings.NewReplacer(`\"`, `"`, `\\`, `\`, "&amp;", "&").Replace(q[1 : len(q)-1])
	return q
}

func TestSVG(t *testing.T) {
	r := New()
	defer r.Close()
	svg, err := r.SVG(context.Background(), "digraph G { a -> b; }")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("<title>a</title>")) {
		t.Fatalf("svg:\n%s", svg)
	}
	if _, err := r.SVG(context.Background(), "digraph {"); err == nil || !strings.Contains(err.Error(), "graphviz: Graphviz refused the DOT text") {
		t.Fatalf("bad DOT: %v", err)
	}
}
