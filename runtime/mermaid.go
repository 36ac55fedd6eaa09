package runtime

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

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
// mermaid.Highlight). With o.ExpandSubgraphs, a thread paused inside a
// child is marked inside the child's block too, at any depth, from the
// journals its pause checkpoint keeps. ts comes from Thread.State or
// Thread.StateAt; o.Highlight is replaced.
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
	if o.ExpandSubgraphs && ts.Checkpoint != nil {
		if err := highlightChildren(h, ts.Checkpoint); err != nil {
			return "", err
		}
	}
	o.Highlight = h
	return Mermaid(g, o)
}

// highlightChildren marks in h where each child that the tasks of the
// pause checkpoint cp hold stands: its planned nodes next, its nodes that
// wait on a person pending, under the subgraph node that runs it.
func highlightChildren(h *mermaid.Highlight, cp *Checkpoint) error {
	byPath := map[string]*Checkpoint{"": cp} // each child's checkpoint, by its path
	for _, t := range cp.Next {
		states, err := childStates(nil, []string{t.Key}, t.Journal)
		if err != nil {
			return err
		}
		for _, c := range states {
			at := h
			for i, key := range c.Path {
				node := key
				if up := byPath[strings.Join(c.Path[:i], "/")]; up != nil {
					if j := slices.IndexFunc(up.Next, func(r checkpoint.TaskRef) bool { return r.Key == key }); j >= 0 {
						node = up.Next[j].Node
					}
				}
				if at.Subgraphs == nil {
					at.Subgraphs = map[string]*mermaid.Highlight{}
				}
				if at.Subgraphs[node] == nil {
					at.Subgraphs[node] = &mermaid.Highlight{}
				}
				at = at.Subgraphs[node]
			}
			byPath[strings.Join(c.Path, "/")] = c.Checkpoint
			for _, n := range c.Checkpoint.Next {
				at.Next = append(at.Next, n.Node)
			}
			for _, p := range c.Checkpoint.Pending {
				at.Pending = append(at.Pending, p.Node)
			}
		}
	}
	return nil
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
	return mg, g.mermaidChildren(doc, &mg)
}

// mermaidChildren adds to mg the diagrams of the children a generated
// program was given (WithSubgraphs), under the subgraph nodes of doc that
// run them.
func (g *Graph[S, U]) mermaidChildren(doc *spec.Graph, mg *mermaid.Graph) error {
	if len(g.children) == 0 {
		return nil
	}
	for _, n := range doc.Nodes {
		if n.Type != spec.SubgraphType {
			continue
		}
		var cfg spec.SubgraphConfig
		if json.Unmarshal(n.Config, &cfg) != nil {
			continue
		}
		c, ok := g.children[cfg.Graph]
		if !ok {
			continue
		}
		cg, err := c.childMermaid()
		if err != nil {
			return err
		}
		if mg.Subgraphs == nil {
			mg.Subgraphs = map[string]mermaid.Graph{}
		}
		mg.Subgraphs[n.ID] = cg
	}
	return nil
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
