package runtime

import "github.com/ilmek-go/ilmek/mermaid"

// Mermaid draws the graph as a Mermaid flowchart in the ilmek/1 format
// (package mermaid; MODEL.md §9.1): a graph built in Go with its Go guards
// and routers (dashed, to their declared targets or to a "?"), one built
// from a document or generated as its document.
func Mermaid[S, U any](g *Graph[S, U], o mermaid.Options) (string, error) {
	mg, err := mermaidGraph(g)
	if err != nil {
		return "", err
	}
	return mermaid.Render(mg, o)
}

// ThreadMermaid draws the graph with where a thread stands, so a service
// can show "where is this approval": the nodes of the thread's planned
// tasks are "next", the nodes of its open interrupts "pending" (see
// mermaid.Highlight). ts comes from ThreadState; o.Highlight is replaced.
func ThreadMermaid[S, U any](g *Graph[S, U], ts ThreadState[S], o mermaid.Options) (string, error) {
	h := &mermaid.Highlight{}
	if ts.Checkpoint != nil {
		for _, t := range ts.Checkpoint.Next {
			h.Next = append(h.Next, t.Node)
		}
	}
	for _, p := range ts.Open {
		h.Pending = append(h.Pending, p.Node)
	}
	o.Highlight = h
	return Mermaid(g, o)
}

// MermaidGraph is what Mermaid draws g from: its nodes and edges (a graph
// built in Go with its guards and routers) and, for its subgraph nodes,
// their children's (Graph.Subgraphs), for another renderer of the same
// model (package dot).
func MermaidGraph[S, U any](g *Graph[S, U]) (mermaid.Graph, error) { return mermaidGraph(g) }

// mermaidGraph describes g's nodes and edges for the renderer: a graph
// built in Go from its builder, any other from its document.
func mermaidGraph[S, U any](g *Graph[S, U]) (mermaid.Graph, error) {
	u, _ := any(g.p).(*untyped)
	if u != nil && u.doc == nil && u.builder != nil {
		mg := u.builder.mermaidGraph()
		return mg, u.builder.mermaidChildren(&mg)
	}
	doc, err := g.p.Spec()
	if err != nil {
		return mermaid.Graph{}, err
	}
	mg := mermaid.FromSpec(doc)
	if u != nil && u.builder != nil {
		return mg, u.builder.mermaidChildren(&mg)
	}
	return mg, nil
}

func (b *Builder) mermaidGraph() mermaid.Graph {
	var mg mermaid.Graph
	for _, n := range b.nodes {
		mg.Nodes = append(mg.Nodes, mermaid.Node{ID: n.id, Type: n.typ})
	}
	for _, e := range b.edges {
		switch {
		case e.router != nil:
			mg.Edges = append(mg.Edges, mermaid.Edge{Kind: mermaid.Router, From: e.from, Targets: e.targets})
		case e.guard != nil:
			mg.Edges = append(mg.Edges, mermaid.Edge{Kind: mermaid.Guard, From: e.from, To: e.to})
		case e.pred != nil:
			mg.Edges = append(mg.Edges, mermaid.Edge{Kind: mermaid.Predicate, From: e.from, To: e.to, When: e.pred})
		default:
			mg.Edges = append(mg.Edges, mermaid.Edge{Kind: mermaid.Static, From: e.from, To: e.to})
		}
	}
	return mg
}
