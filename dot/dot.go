// Package dot draws ilmek graphs as Graphviz DOT, beside the Mermaid text
// of package mermaid and from the same model (mermaid.Graph, and a
// thread's position as a mermaid.Highlight): nodes planned next carry the
// class "next", nodes waiting on a person the class "pending" and
// " (waiting)" after the name (text, so that no emoji font is needed), and
// every node's id (the SVG element id once laid out) is
// "node_" and its name. The children of a graph's subgraph nodes
// (mermaid.Graph.Subgraphs) are drawn as clusters, marked where they stand
// by mermaid.Highlight.Subgraphs (see Diagram).
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
//
// Each node of g.Subgraphs is drawn as a cluster (a box around the
// child's own diagram: its START, nodes, END and edges, nested as deep as
// the children go) labelled with the node's name, with id "node_" and the
// name; the parent's edges reach the cluster's START and leave from its
// END. The child's nodes are named (and their ids made) from the path of
// subgraph nodes and their names, "refund/approve", made unique with "_"
// appended when a name of the diagram is that already, and
// h.Subgraphs marks where each child stands. A graph without Subgraphs is
// drawn as before them.
func Diagram(g mermaid.Graph, h *mermaid.Highlight) string {
	var b strings.Builder
	b.WriteString("digraph G {\n  rankdir=TB;\n  bgcolor=\"transparent\";\n")
	if len(g.Subgraphs) > 0 {
		// Edges may end at a cluster's border (lhead, ltail).
		b.WriteString("  compound=true;\n")
	}
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", color=\"#444444\", fontname=\"Helvetica\", fontsize=12];\n")
	b.WriteString("  edge [color=\"#444444\", fontname=\"Helvetica\", fontsize=10];\n")
	d := &drawer{b: &b, used: map[string]bool{}}
	for _, name := range names(g) {
		d.used[name] = true
	}
	d.used[spec.Start], d.used[spec.End] = true, true
	d.graph(g, h, "", "  ")
	b.WriteString("}\n")
	return b.String()
}

// names lists every node name g's nodes and edges hold.
func names(g mermaid.Graph) []string {
	out := make([]string, 0, len(g.Nodes))
	for _, n := range g.Nodes {
		out = append(out, n.ID)
	}
	for _, e := range g.Edges {
		out = append(out, e.From, e.To)
		out = append(out, e.Targets...)
	}
	return out
}

// drawer writes one diagram: the DOT names it has given out (so a child's
// names never merge with another node) and its clusters and routers
// counted.
type drawer struct {
	b        *strings.Builder
	used     map[string]bool
	clusters int
	routers  int
}

// fresh returns base, with "_" appended while that name is taken, and
// takes it.
func (d *drawer) fresh(base string) string {
	for d.used[base] {
		base += "_"
	}
	d.used[base] = true
	return base
}

// cluster is a child drawn inside a subgraph node: the DOT names of its
// START and END (where the parent's edges arrive and leave) and the
// cluster's own name.
type cluster struct{ name, start, end string }

// graph writes g's nodes and edges, each line indented: the root's with
// their own names (prefix ""), a child's with names starting with prefix,
// inside its cluster.
func (d *drawer) graph(g mermaid.Graph, h *mermaid.Highlight, prefix, indent string) (start, end string) {
	b := d.b
	next, pending := map[string]bool{}, map[string]bool{}
	if h != nil {
		for _, n := range h.Next {
			next[n] = true
		}
		for _, n := range h.Pending {
			pending[n] = true
		}
	}
	dotName := map[string]string{spec.Start: spec.Start, spec.End: spec.End}
	if prefix != "" {
		dotName[spec.Start], dotName[spec.End] = d.fresh(prefix+spec.Start), d.fresh(prefix+spec.End)
	}
	fmt.Fprintf(b, "%s%s [label=\"START\", shape=oval, id=%s, class=\"terminal\"];\n", indent, Quote(dotName[spec.Start]), Quote("node_"+dotName[spec.Start]))
	clusters := map[string]cluster{}
	declared := map[string]bool{spec.Start: true, spec.End: true}
	node := func(name string) {
		if declared[name] {
			return
		}
		declared[name] = true
		id := name
		if prefix != "" {
			id = d.fresh(prefix + name)
		}
		dotName[name] = id
		label, attrs := name, ""
		if child, ok := g.Subgraphs[name]; ok {
			c := cluster{name: fmt.Sprintf("cluster_%d", d.clusters)}
			d.clusters++
			attrs = ", style=\"rounded\", color=\"#444444\""
			switch {
			case pending[name]:
				label = name + " (waiting)"
				attrs = ", class=\"pending\", style=\"rounded,filled\", color=\"#444444\", fillcolor=\"#fef9e7\", penwidth=2.5"
			case next[name]:
				attrs = ", class=\"next\", style=\"rounded,filled\", color=\"#444444\", fillcolor=\"#eff6ff\", penwidth=2.5"
			}
			fmt.Fprintf(b, "%ssubgraph %s {\n", indent, Quote(c.name))
			fmt.Fprintf(b, "%s  graph [label=%s, id=%s%s, fontname=\"Helvetica\", fontsize=12];\n", indent, Quote(label), Quote("node_"+id), attrs)
			var ch *mermaid.Highlight
			if h != nil {
				ch = h.Subgraphs[name]
			}
			c.start, c.end = d.graph(child, ch, id+"/", indent+"  ")
			fmt.Fprintf(b, "%s}\n", indent)
			clusters[name] = c
			return
		}
		switch {
		case pending[name]:
			label = name + " (waiting)"
			attrs = ", class=\"pending\", fillcolor=\"#fde68a\", penwidth=2.5"
		case next[name]:
			attrs = ", class=\"next\", fillcolor=\"#bfdbfe\", penwidth=2.5"
		}
		fmt.Fprintf(b, "%s%s [label=%s, id=%s%s];\n", indent, Quote(id), Quote(label), Quote("node_"+id), attrs)
	}
	for _, n := range g.Nodes {
		node(n.ID)
	}
	usesEnd := prefix != "" // a child always ends: the parent's edges leave from its END
	var edges strings.Builder
	edge := func(from, to, label string, dashed bool) {
		if to == spec.End {
			usesEnd = true
		}
		attrs := []string{}
		if label != "" {
			attrs = append(attrs, "label="+Quote(label))
		}
		if dashed {
			attrs = append(attrs, "style=dashed")
		}
		f, t := dotName[from], dotName[to]
		if c, ok := clusters[from]; ok {
			f = c.end
			attrs = append(attrs, "ltail="+Quote(c.name))
		}
		if c, ok := clusters[to]; ok {
			t = c.start
			attrs = append(attrs, "lhead="+Quote(c.name))
		}
		fmt.Fprintf(&edges, "%s%s -> %s", indent, Quote(f), Quote(t))
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
				r := fmt.Sprintf("__router_%d__", d.routers)
				d.routers++
				if prefix != "" {
					r = d.fresh(prefix + r)
				}
				fmt.Fprintf(b, "%s%s [label=\"?\", shape=diamond];\n", indent, Quote(r))
				dotName[r] = r
				edge(e.From, r, "", true)
				continue
			}
			for _, t := range e.Targets {
				node(t)
				edge(e.From, t, "", true)
			}
		}
	}
	if usesEnd {
		fmt.Fprintf(b, "%s%s [label=\"END\", shape=oval, id=%s, class=\"terminal\"];\n", indent, Quote(dotName[spec.End]), Quote("node_"+dotName[spec.End]))
	}
	b.WriteString(edges.String())
	return dotName[spec.Start], dotName[spec.End]
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
