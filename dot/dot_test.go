package dot

import (
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/spec"
)

func TestDiagram(t *testing.T) {
	ok := spec.Eq("ok", true)
	chain := mermaid.Graph{
		Nodes: []mermaid.Node{{ID: "write"}, {ID: "review"}, {ID: "publish"}},
		Edges: []mermaid.Edge{
			{Kind: mermaid.Static, From: spec.Start, To: "write"},
			{Kind: mermaid.Static, From: "write", To: "review"},
			{Kind: mermaid.Predicate, From: "review", To: "publish", When: &ok},
			{Kind: mermaid.Guard, From: "review", To: spec.End},
			{Kind: mermaid.Router, From: "publish"},
			{Kind: mermaid.Router, From: "write", Targets: []string{"extra", spec.End}},
		},
	}
	for _, c := range []struct {
		name       string
		g          mermaid.Graph
		h          *mermaid.Highlight
		want, nope []string
	}{
		{name: "no thread", g: chain, want: []string{
			`"__start__" [label="START", shape=oval, id="node___start__", class="terminal"];`,
			`"review" [label="review", id="node_review"];`,
			`"__end__" [label="END", shape=oval, id="node___end__", class="terminal"];`,
			`"review" -> "publish" [label="ok == true"];`,
			`"review" -> "__end__" [label="guard", style=dashed];`,
			`"__router_0__" [label="?", shape=diamond];`,
			`"publish" -> "__router_0__" [style=dashed];`,
			`"extra" [label="extra", id="node_extra"];`,
			`"write" -> "extra" [style=dashed];`,
		}, nope: []string{"class=\"next\"", "class=\"pending\""}},
		{name: "pending and next", g: chain, h: &mermaid.Highlight{Next: []string{"publish"}, Pending: []string{"review"}}, want: []string{
			`"review" [label="review (waiting)", id="node_review", class="pending"`,
			`"publish" [label="publish", id="node_publish", class="next"`,
		}},
		{name: "no end", g: mermaid.Graph{Nodes: []mermaid.Node{{ID: "a"}}}, nope: []string{"__end__"}},
		{name: "hostile names", g: mermaid.Graph{Nodes: []mermaid.Node{{ID: `a"b\c`}, {ID: "&nbsp;"}, {ID: "x\ny\x00z"}}}, want: []string{
			`"a\"b\\c" [label="a\"b\\c", id="node_a\"b\\c"];`,
			`"&amp;nbsp;" [label="&amp;nbsp;", id="node_&amp;nbsp;"];`,
			"\"x y\uFFFDz\" [label=",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := Diagram(c.g, c.h)
			if !strings.HasPrefix(out, "digraph G {\n") || !strings.HasSuffix(out, "}\n") {
				t.Fatalf("not a digraph:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("missing %s in:\n%s", w, out)
				}
			}
			for _, n := range c.nope {
				if strings.Contains(out, n) {
					t.Errorf("has %s in:\n%s", n, out)
				}
			}
		})
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain":            `"plain"`,
		`say "hi"`:         `"say \"hi\""`,
		`a\nb`:             `"a\\nb"`,
		"a\r\nb\tc":        `"a  b c"`,
		"&lt;":             `"&amp;lt;"`,
		"bell\a\x7f\u0085": "\"bell\uFFFD\uFFFD\uFFFD\"",
		"bad\xffutf8":      "\"bad\uFFFDutf8\"",
		"\u202eevil":       "\"\u202eevil\"",
		"<script>":         `"<script>"`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}
