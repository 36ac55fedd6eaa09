// Package mermaid draws ilmek graphs as Mermaid flowcharts in the format
// of the ilmek/1 model (MODEL.md §9.1), byte for byte as the reference
// implementation and every other port draw them, so a diagram made by a Go
// service and one made by a TypeScript or .NET service for the same graph
// are the same text and reviewers' diffs do not churn.
//
//	flowchart TD
//	  __start__([START])
//	  agent["agent"]
//	  checkout["checkout"]
//	  __end__([END])
//	  __start__ --> agent
//	  agent -->|"intent == #quot;buy#quot;"| checkout
//	  checkout --> __end__
//
// The format:
//
//   - The first line is "flowchart" and the direction (TD by default; TB,
//     BT, LR and RL too). START is always drawn; END only when an edge or a
//     router's declared targets reach it.
//   - Every node is a box labelled with its name, in declaration order (then
//     any node an edge names that was not declared). Its Mermaid id is its
//     name when the name is a plain identifier ([A-Za-z_][A-Za-z0-9_]*) and
//     no Mermaid keyword in any case (end, graph, subgraph, style, class,
//     ...); otherwise n<i>, i being its position, with "_" appended while
//     that id is taken by a plain name.
//   - Solid edges are static or declarative: a predicate is the label,
//     written as a reader would (intent == "buy", intent != "buy", x in
//     ["a", 3, null], n > 10, n < 2.5, truthy(x), not truthy(x)), literals in
//     JSON as JavaScript writes it.
//   - Dashed edges are decided by code: a hand-written Go guard (labelled
//     "guard"), a router to each of its declared targets, or a router that
//     declared none, to a "?" decision node r<k>. A document's node that
//     declares a "goto" list (where its command's goto and sends may lead)
//     is drawn as a router with those targets, after the document's edges.
//   - Labels escape # " < > and ` as Mermaid entity codes (#35;, #quot;,
//     #lt;, #gt;, #96;) and turn line breaks into spaces, so no text of a
//     document can change the diagram's structure.
//   - A thread's position is drawn with two classes: "next" on the nodes
//     the thread runs next, "pending" (and ⏸ before the name) on the nodes
//     waiting on a person; a pending node is never also next. With
//     Options.ExpandSubgraphs, Highlight.Subgraphs marks a child's nodes
//     inside its block the same way; the class lines, after every edge
//     of the diagram, list the marked ids in the order they are drawn.
//
// Render takes a Graph (nodes and edges, see FromSpec for a document, and
// runtime.Mermaid for any built graph). The package depends only on spec
// and the standard library, so the generator and the runtime both use it.
package mermaid

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ilmek-go/ilmek/spec"
)

// EdgeKind says how an edge is decided.
type EdgeKind int

const (
	// Static is an unguarded edge.
	Static EdgeKind = iota
	// Predicate is an edge guarded by a declarative predicate (When).
	Predicate
	// Guard is an edge guarded by a Go function (drawn dashed, "guard").
	Guard
	// Router is a router: Go code that picks the targets. Targets lists the
	// targets it declared; nil means it declared none (drawn to a "?").
	Router
)

// Edge is one edge of a Graph, reduced to what a picture can show.
type Edge struct {
	Kind EdgeKind
	From string
	To   string          // Static, Predicate, Guard
	When *spec.Predicate // Predicate
	// Targets are a router's declared targets (node names or spec.End);
	// nil when it declared none.
	Targets []string
}

// Node is one node of a Graph.
type Node struct {
	ID   string
	Type string // drawn only with Options.Types
}

// Graph is what Render draws: nodes in declaration order and edges in the
// order they were added.
type Graph struct {
	Nodes []Node
	Edges []Edge
	// Subgraphs are the graphs that subgraph nodes run, by node name;
	// drawn only with Options.ExpandSubgraphs.
	Subgraphs map[string]Graph
}

// Highlight marks where a thread stands: Next are the nodes it runs next,
// Pending the nodes waiting on a person (names; repeats are fine).
type Highlight struct {
	Next    []string
	Pending []string
	// Subgraphs marks where each child stands, by the name of the
	// subgraph node that runs it: drawn inside the child's block with
	// Options.ExpandSubgraphs (the child's nodes get the classes and the
	// ⏸), ignored without it.
	Subgraphs map[string]*Highlight
}

// Options configure Render. The zero value is the normative default.
type Options struct {
	// Direction is "TD" (the default when empty), "TB", "BT", "LR" or "RL".
	Direction string
	// HideRouters leaves router edges out (the reference's
	// includeRouters: false).
	HideRouters bool
	// Highlight, when set, marks a thread's position.
	Highlight *Highlight
	// Types writes each node's type under its name, in italics. This is
	// not the normative format: use it for people, not for diffs across
	// implementations.
	Types bool
	// ExpandSubgraphs draws each node of Graph.Subgraphs as a Mermaid
	// "subgraph … end" block holding the child's own diagram (its START,
	// nodes, END and edges, with ids of their own), nested as deep as the
	// children go; the parent's edges reach the block. Without it a
	// subgraph node is a box like any other, as MODEL §9.1 draws it. Not
	// the normative format either.
	ExpandSubgraphs bool
}

// Directions lists the flowchart directions Render accepts.
var Directions = []string{"TD", "TB", "BT", "LR", "RL"}

// keywords are the words Mermaid's flowchart grammar claims; a node whose
// name is one of them, in any case, gets a generated id.
var keywords = map[string]bool{
	"end": true, "graph": true, "flowchart": true, "subgraph": true, "style": true, "class": true, "classdef": true,
	"click": true, "linkstyle": true, "direction": true, "default": true, "call": true, "href": true, "interpolate": true,
}

// plainID reports whether name can be its own Mermaid id.
func plainID(name string) bool {
	if name == "" || keywords[strings.ToLower(name)] {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Render draws g. It fails only for an unknown Options.Direction.
func Render(g Graph, o Options) (string, error) {
	dir := o.Direction
	if dir == "" {
		dir = "TD"
	}
	if !slices.Contains(Directions, dir) {
		return "", fmt.Errorf("mermaid: unknown direction %q; use TD, TB, BT, LR or RL", dir)
	}
	var b strings.Builder
	b.WriteString("flowchart " + dir + "\n")
	var m marks
	body(&b, g, o, "", "  ", map[string]bool{}, &m)
	if len(m.next) > 0 {
		b.WriteString("  classDef next stroke-width:3px\n")
		b.WriteString("  class " + strings.Join(m.next, ",") + " next\n")
	}
	if len(m.pending) > 0 {
		b.WriteString("  classDef pending stroke-width:3px,stroke-dasharray:5 3\n")
		b.WriteString("  class " + strings.Join(m.pending, ",") + " pending\n")
	}
	return b.String(), nil
}

// marks are the ids a diagram marks "next" and "pending", in the order
// they are drawn (a child's inside its block, after the block's own id).
type marks struct{ next, pending []string }

// body writes g's nodes and edges, each line indented, with ids that start
// with prefix and are not in taken (which it extends), and adds the ids it
// marks to m: the whole diagram for the root (prefix "", nothing taken), a
// subgraph block's content for a child.
func body(b *strings.Builder, g Graph, o Options, prefix, indent string, taken map[string]bool, m *marks) {
	edges := g.Edges
	if o.HideRouters {
		edges = slices.DeleteFunc(slices.Clone(edges), func(e Edge) bool { return e.Kind == Router })
	}

	// Every node an edge names is drawn, even one that was not declared.
	order := make([]string, 0, len(g.Nodes))
	types := make(map[string]string, len(g.Nodes))
	known := map[string]bool{}
	add := func(name string) {
		if name != spec.Start && name != spec.End && !known[name] {
			known[name] = true
			order = append(order, name)
		}
	}
	for _, n := range g.Nodes {
		add(n.ID)
		if _, ok := types[n.ID]; !ok {
			types[n.ID] = n.Type
		}
	}
	for _, e := range edges {
		add(e.From)
		if e.Kind == Router {
			for _, t := range e.Targets {
				add(t)
			}
		} else {
			add(e.To)
		}
	}

	used := taken
	fresh := func(base string) string {
		id := base
		for used[id] {
			id += "_"
		}
		used[id] = true
		return id
	}
	ids := map[string]string{}
	if prefix == "" {
		// The root keeps the normative ids: its plain names, then n<i>.
		used[spec.Start], used[spec.End] = true, true
		ids[spec.Start], ids[spec.End] = spec.Start, spec.End
		for _, name := range order {
			if plainID(name) {
				used[name] = true
			}
		}
	} else {
		ids[spec.Start], ids[spec.End] = fresh(prefix+spec.Start), fresh(prefix+spec.End)
	}
	for i, name := range order {
		switch {
		case prefix == "" && plainID(name):
			ids[name] = name
		case plainID(name):
			ids[name] = fresh(prefix + name)
		default:
			ids[name] = fresh(fmt.Sprintf("%sn%d", prefix, i))
		}
	}
	unknown := map[int]string{} // edge index -> "?" node id
	routers := 0
	for i, e := range edges {
		if e.Kind == Router && e.Targets == nil {
			unknown[i] = fresh(fmt.Sprintf("r%d", routers))
			routers++
		}
	}

	pending, next := map[string]bool{}, map[string]bool{}
	if h := o.Highlight; h != nil {
		for _, n := range h.Pending {
			pending[n] = true
		}
		for _, n := range h.Next {
			if !pending[n] {
				next[n] = true
			}
		}
	}
	usesEnd := false
	for _, e := range edges {
		if (e.Kind == Router && slices.Contains(e.Targets, spec.End)) || (e.Kind != Router && e.To == spec.End) {
			usesEnd = true
		}
	}

	b.WriteString(indent + ids[spec.Start] + "([START])\n")
	for _, name := range order {
		text := label(name)
		if pending[name] {
			text = label("⏸ " + name)
		}
		if o.Types && types[name] != "" {
			text += "<br/><i>" + label(types[name]) + "</i>"
		}
		switch {
		case pending[name]:
			m.pending = append(m.pending, ids[name])
		case next[name]:
			m.next = append(m.next, ids[name])
		}
		if child, ok := g.Subgraphs[name]; ok && o.ExpandSubgraphs {
			fmt.Fprintf(b, "%ssubgraph %s [\"%s\"]\n", indent, ids[name], text)
			co := o
			co.Highlight = nil
			if o.Highlight != nil {
				co.Highlight = o.Highlight.Subgraphs[name]
			}
			body(b, child, co, ids[name]+"_", indent+"  ", used, m)
			b.WriteString(indent + "end\n")
			continue
		}
		fmt.Fprintf(b, "%s%s[\"%s\"]\n", indent, ids[name], text)
	}
	for i := range edges {
		if id, ok := unknown[i]; ok {
			fmt.Fprintf(b, "%s%s{\"?\"}\n", indent, id)
		}
	}
	if usesEnd {
		b.WriteString(indent + ids[spec.End] + "([END])\n")
	}
	for i, e := range edges {
		from := ids[e.From]
		switch e.Kind {
		case Static:
			fmt.Fprintf(b, "%s%s --> %s\n", indent, from, ids[e.To])
		case Predicate:
			fmt.Fprintf(b, "%s%s -->|\"%s\"| %s\n", indent, from, label(PredicateText(e.When)), ids[e.To])
		case Guard:
			fmt.Fprintf(b, "%s%s -.->|\"guard\"| %s\n", indent, from, ids[e.To])
		case Router:
			if e.Targets == nil {
				fmt.Fprintf(b, "%s%s -.-> %s\n", indent, from, unknown[i])
			}
			for _, t := range e.Targets {
				fmt.Fprintf(b, "%s%s -.-> %s\n", indent, from, ids[t])
			}
		}
	}
}

// FromSpec returns the Graph of a document: its nodes, its edges as Static
// or Predicate edges, then, for every node that declares a "goto" list, in
// node order, a Router edge to those targets: where a command's goto or
// sends may lead is decided by code, as a router's targets are, so the
// diagram draws them the same way, dashed (and HideRouters hides them).
func FromSpec(doc *spec.Graph) Graph {
	g := Graph{Nodes: make([]Node, len(doc.Nodes)), Edges: make([]Edge, len(doc.Edges))}
	for i, n := range doc.Nodes {
		g.Nodes[i] = Node{ID: n.ID, Type: n.Type}
	}
	for i, e := range doc.Edges {
		if e.When != nil {
			g.Edges[i] = Edge{Kind: Predicate, From: e.From, To: e.To, When: e.When}
		} else {
			g.Edges[i] = Edge{Kind: Static, From: e.From, To: e.To}
		}
	}
	for _, n := range doc.Nodes {
		if len(n.Goto) > 0 {
			g.Edges = append(g.Edges, Edge{Kind: Router, From: n.ID, Targets: n.Goto})
		}
	}
	return g
}

// Spec draws a document with the given options.
func Spec(doc *spec.Graph, o Options) (string, error) { return Render(FromSpec(doc), o) }
