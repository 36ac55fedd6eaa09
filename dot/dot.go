// Package dot draws ilmek graphs as Graphviz DOT, beside the Mermaid text
// of package mermaid and from the same model (mermaid.Graph, and a
// thread's position as a mermaid.Highlight): nodes planned next carry the
// class "next", nodes waiting on a person the class "pending" and
// " (waiting)" after the name (text, so that no emoji font is needed), and
// every node's id (the SVG element id once laid out) is
// "node_" and its name.
//
// Names and labels are written so that no text of a graph can change the
// diagram's structure or the SVG a renderer makes of it: quotes and
// backslashes are escaped for DOT, "&" is written as "&amp;" (Graphviz
// passes entity references through to its SVG, and "&nbsp;" is not XML),
// line breaks become spaces, and the other control characters and invalid
// UTF-8, which XML cannot hold, become U+FFFD. Graphviz escapes "<", ">"
// and quotes itself when it writes SVG.
//
// The package depends only on mermaid, spec and the standard library; the
// layout to SVG is package graphviz's.
package dot

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/spec"
)

// Diagram returns g as DOT with where a thread stands (h may be nil).
func Diagram(g mermaid.Graph, h *mermaid.Highlight) string {
	next, pending := map[string]bool{}, map[string]bool{}
	if h != nil {
		for _, n := range h.Next {
			next[n] = true
		}
		for _, n := range h.Pending {
			pending[n] = true
		}
	}
	var b strings.Builder
	b.WriteString("digraph G {\n  rankdir=TB;\n  bgcolor=\"transparent\";\n")
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", color=\"#444444\", fontname=\"Helvetica\", fontsize=12];\n")
	b.WriteString("  edge [color=\"#444444\", fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  \"__start__\" [label=\"START\", shape=oval, id=\"node___start__\", class=\"terminal\"];\n")
	declared := map[string]bool{spec.Start: true, spec.End: true}
	node := func(name string) {
		if declared[name] {
			return
		}
		declared[name] = true
		label, attrs := name, ""
		switch {
		case pending[name]:
			label = name + " (waiting)"
			attrs = ", class=\"pending\", fillcolor=\"#fde68a\", penwidth=2.5"
		case next[name]:
			attrs = ", class=\"next\", fillcolor=\"#bfdbfe\", penwidth=2.5"
		}
		fmt.Fprintf(&b, "  %s [label=%s, id=%s%s];\n", Quote(name), Quote(label), Quote("node_"+name), attrs)
	}
	for _, n := range g.Nodes {
		node(n.ID)
	}
	end := false
	var edges strings.Builder
	routers := 0
	edge := func(from, to, label string, dashed bool) {
		if to == spec.End {
			end = true
		}
		attrs := []string{}
		if label != "" {
			attrs = append(attrs, "label="+Quote(label))
		}
		if dashed {
			attrs = append(attrs, "style=dashed")
		}
		fmt.Fprintf(&edges, "  %s -> %s", Quote(from), Quote(to))
		if len(attrs) > 0 {
			fmt.Fprintf(&edges, " [%s]", strings.Join(attrs, ", "))
		}
		edges.WriteString(";\n")
	}
	for _, e := range g.Edges {
		for _, n := range []string{e.From, e.To} {
			if n != "" {
				node(n)
			}
		}
		switch e.Kind {
		case mermaid.Static:
			edge(e.From, e.To, "", false)
		case mermaid.Predicate:
			edge(e.From, e.To, mermaid.PredicateText(e.When), false)
		case mermaid.Guard:
			edge(e.From, e.To, "guard", true)
		case mermaid.Router:
			if e.Targets == nil {
				r := fmt.Sprintf("__router_%d__", routers)
				routers++
				fmt.Fprintf(&b, "  %s [label=\"?\", shape=diamond];\n", Quote(r))
				edge(e.From, r, "", true)
				continue
			}
			for _, t := range e.Targets {
				node(t)
				edge(e.From, t, "", true)
			}
		}
	}
	if end {
		b.WriteString("  \"__end__\" [label=\"END\", shape=oval, id=\"node___end__\", class=\"terminal\"];\n")
	}
	b.WriteString(edges.String())
	b.WriteString("}\n")
	return b.String()
}

// Quote returns s as a DOT string whose text Graphviz shows, and writes
// into SVG, as is (see the package doc for what is replaced).
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '&':
			b.WriteString("&amp;")
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"),
			r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, r == 0xfffe, r == 0xffff:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
