package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ilmek-go/ilmek/spec"
)

// Builder defines a graph in Go code: channels with built-in or custom
// reducers, nodes with or without a registry type, edges guarded by a
// declarative predicate or a Go function, and routers. Compile validates it
// and returns a runnable Graph over Values. The methods return the Builder
// so definitions chain; problems are collected and reported by Compile.
type Builder struct {
	name     string
	channels []builderChannel
	nodes    []builderNode
	edges    []builderEdge
	gotos    map[string][]string // declared goto lists by node id
	errs     []string
}

type builderChannel struct {
	name    string
	reducer spec.Reducer
	custom  ReducerFunc
}

type builderNode struct {
	id, typ string
	config  any
	fn      NodeFunc
	sub     Child // the child of a subgraph node (subgraph.go)
}

type builderEdge struct {
	from, to string
	pred     *spec.Predicate
	guard    func(Values) bool
	router   func(Values) ([]Goto, error)
	targets  []string // a router's declared targets; nil: none declared
}

// NewBuilder starts a code-defined graph called name.
func NewBuilder(name string) *Builder { return &Builder{name: name} }

// Channel declares a channel with a built-in reducer (spec.LastWrite when
// reducer is "").
func (b *Builder) Channel(name string, reducer spec.Reducer) *Builder {
	if reducer != "" && !slices.Contains(spec.Reducers, reducer) {
		b.errs = append(b.errs, fmt.Sprintf("channel %q: unknown reducer %q (use spec.LastWrite, spec.Append or spec.Merge, or ChannelFunc for a custom one)", name, reducer))
	}
	b.channels = append(b.channels, builderChannel{name: name, reducer: reducer})
	return b
}

// ChannelFunc declares a channel with a custom reducer. Such a graph cannot
// be stored as a document: ToSpec refuses it.
func (b *Builder) ChannelFunc(name string, fn ReducerFunc) *Builder {
	b.channels = append(b.channels, builderChannel{name: name, custom: fn})
	return b
}

// Node adds an anonymous node (no registry type): it runs, but ToSpec
// refuses to store it. Nodes reduce in the order they are added.
func (b *Builder) Node(id string, fn NodeFunc) *Builder {
	b.nodes = append(b.nodes, builderNode{id: id, fn: fn})
	return b
}

// TypedNode adds a node with a registry type and its config (any value that
// encodes to a JSON object, or nil), so the graph can be stored.
func (b *Builder) TypedNode(id, typ string, config any, fn NodeFunc) *Builder {
	b.nodes = append(b.nodes, builderNode{id: id, typ: typ, config: config, fn: fn})
	return b
}

// Goto declares the destinations a command or send of node from may name
// (node ids or spec.End), as a document's "goto" member does: a run
// refuses any other (UndeclaredGotoError), ToSpec stores the list, and
// the targets count as reachable. Without it, a node's command may route
// anywhere.
func (b *Builder) Goto(from string, targets ...string) *Builder {
	if b.gotos == nil {
		b.gotos = map[string][]string{}
	}
	if _, dup := b.gotos[from]; dup {
		b.errs = append(b.errs, fmt.Sprintf("node %q declares its goto list twice; give every target in one Goto call", from))
		return b
	}
	b.gotos[from] = slices.Clone(targets)
	return b
}

// Edge adds an unguarded edge. from may be spec.Start, to may be spec.End.
func (b *Builder) Edge(from, to string) *Builder {
	b.edges = append(b.edges, builderEdge{from: from, to: to})
	return b
}

// EdgeWhen adds an edge guarded by a declarative predicate (storable).
func (b *Builder) EdgeWhen(from, to string, p spec.Predicate) *Builder {
	b.edges = append(b.edges, builderEdge{from: from, to: to, pred: &p})
	return b
}

// EdgeIf adds an edge guarded by a Go function of the state. It must be pure:
// it runs while planning, outside any task. ToSpec refuses it.
func (b *Builder) EdgeIf(from, to string, guard func(Values) bool) *Builder {
	b.edges = append(b.edges, builderEdge{from: from, to: to, guard: guard})
	return b
}

// Router adds a conditional edge whose function returns the targets (node
// ids, spec.End, or sends) from the state. It must be pure. ToSpec refuses it.
func (b *Builder) Router(from string, fn func(Values) ([]Goto, error)) *Builder {
	b.edges = append(b.edges, builderEdge{from: from, router: fn})
	return b
}

// RouterTo adds a router that declares the targets it may pick: node ids
// and spec.End. Diagrams draw a dashed edge to each (a router without
// declared targets is drawn to a "?"), and a run fails when the router
// picks a node it did not declare. It must be pure. ToSpec refuses it.
func (b *Builder) RouterTo(from string, targets []string, fn func(Values) ([]Goto, error)) *Builder {
	if targets == nil {
		targets = []string{}
	}
	b.edges = append(b.edges, builderEdge{from: from, router: fn, targets: slices.Clone(targets)})
	return b
}

// Compile validates the definition and returns the runnable graph. Every
// problem is reported at once.
func (b *Builder) Compile(opts ...Option) (*Graph[Values, Values], error) {
	p, err := b.program()
	if err != nil {
		return nil, err
	}
	return newGraph[Values, Values](p, opts...)
}

func (b *Builder) program() (*untyped, error) {
	errs := slices.Clone(b.errs)
	u := &untyped{shape: &Shape{Name: b.name}, chans: map[string]*channelDef{}, builder: b}
	for _, c := range b.channels {
		if c.name == "" {
			errs = append(errs, "a channel has an empty name")
			continue
		}
		if u.chans[c.name] != nil {
			errs = append(errs, fmt.Sprintf("channel %q is declared twice", c.name))
			continue
		}
		u.chans[c.name] = &channelDef{name: c.name, reducer: c.reducer, custom: c.custom}
		red := string(c.reducer)
		switch {
		case c.custom != nil:
			red = "custom"
		case red == "":
			red = string(spec.LastWrite)
		}
		u.shape.Channels = append(u.shape.Channels, ChannelShape{Name: c.name, Reducer: red})
	}
	slices.SortFunc(u.shape.Channels, func(a, b ChannelShape) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range u.chans {
		if c.reducer == "" && c.custom == nil {
			c.reducer = spec.LastWrite
		}
	}
	index := map[string]int{}
	for _, n := range b.nodes {
		switch {
		case n.id == "":
			errs = append(errs, "a node has an empty id")
			continue
		case n.id == spec.Start || n.id == spec.End:
			errs = append(errs, fmt.Sprintf("node id %q is reserved for the graph's entry and exit; rename the node", n.id))
			continue
		case n.fn == nil:
			errs = append(errs, fmt.Sprintf("node %q has no function", n.id))
		}
		if _, dup := index[n.id]; dup {
			errs = append(errs, fmt.Sprintf("duplicate node %q", n.id))
			continue
		}
		index[n.id] = len(u.nodes)
		u.nodes = append(u.nodes, n.fn)
		u.shape.Nodes = append(u.shape.Nodes, NodeShape{ID: n.id, Type: n.typ})
	}
	u.edges = make([][]edgeDef, len(u.nodes)+1)
	entry := false
	for _, e := range b.edges {
		from := startNode
		if e.from != spec.Start {
			i, ok := index[e.from]
			if !ok {
				errs = append(errs, fmt.Sprintf("edge %q -> %q: unknown source node %q", e.from, e.to, e.from))
				continue
			}
			from = i
		} else {
			entry = true
		}
		d := edgeDef{to: endNode, pred: e.pred, guard: e.guard, router: e.router}
		if e.targets != nil {
			d.declared = map[int]bool{}
			for _, t := range e.targets {
				switch i, ok := index[t]; {
				case t == spec.End:
					d.declared[endNode] = true
				case ok:
					d.declared[i] = true
				default:
					errs = append(errs, fmt.Sprintf("router of %q declares unknown target %q", e.from, t))
				}
			}
		}
		if e.router == nil && e.to != spec.End {
			i, ok := index[e.to]
			if !ok {
				errs = append(errs, fmt.Sprintf("edge %q -> unknown node %q", e.from, e.to))
				continue
			}
			d.to = i
		}
		if e.pred != nil && u.chans[e.pred.Channel] == nil {
			errs = append(errs, fmt.Sprintf("edge %q -> %q: predicate references channel %q, which this graph does not declare", e.from, e.to, e.pred.Channel))
			continue
		}
		u.edges[from+1] = append(u.edges[from+1], d)
	}
	if !entry {
		errs = append(errs, "graph has no entry edge: add an edge from spec.Start")
	}
	errs = append(errs, b.checkGotos(index)...)
	errs = append(errs, b.checkSubgraphs()...)
	if len(errs) > 0 {
		return nil, &SpecError{Msg: "runtime: cannot compile graph " + fmt.Sprintf("%q", b.name) + ":\n\t" + strings.Join(errs, "\n\t")}
	}
	return u, nil
}

// toSpec turns the definition into a document, or explains every part a
// document cannot hold.
func (b *Builder) toSpec() (*spec.Graph, error) {
	var errs []error
	g := &spec.Graph{Name: b.name, NameKind: spec.Set}
	for _, c := range b.channels {
		if c.custom != nil {
			errs = append(errs, fmt.Errorf("channel %q has a custom reducer; a document can only name last_write, append or merge", c.name))
			continue
		}
		g.Channels = append(g.Channels, spec.Channel{Name: c.name, Reducer: c.reducer})
	}
	slices.SortFunc(g.Channels, func(a, b spec.Channel) int { return strings.Compare(a.Name, b.Name) })
	for _, n := range b.nodes {
		if n.typ == "" {
			errs = append(errs, fmt.Errorf("node %q has no registry type; add it with TypedNode so a registry can rebuild it", n.id))
			continue
		}
		sn := spec.Node{ID: n.id, Type: n.typ, Goto: slices.Clone(b.gotos[n.id])}
		if n.config != nil {
			raw, err := json.Marshal(n.config)
			if err != nil || len(raw) == 0 || raw[0] != '{' {
				errs = append(errs, fmt.Errorf("node %q: config must encode to a JSON object (err: %v)", n.id, err))
				continue
			}
			sn.Config = raw
		}
		g.Nodes = append(g.Nodes, sn)
	}
	for _, e := range b.edges {
		switch {
		case e.router != nil:
			errs = append(errs, fmt.Errorf("node %q has a router; a document can only hold declarative predicates — use EdgeWhen edges or a command from the node", e.from))
		case e.guard != nil:
			errs = append(errs, fmt.Errorf("edge %q -> %q has a Go guard; a document can only hold a declarative predicate — use EdgeWhen", e.from, e.to))
		default:
			g.Edges = append(g.Edges, spec.Edge{From: e.from, To: e.to, When: e.pred})
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("runtime: graph %q cannot be stored as a document: %w", b.name, errors.Join(errs...))
	}
	return g, nil
}

// checkGotos returns what is wrong with the declared goto lists, as the
// document's rules say: a known node, targets that are nodes or spec.End,
// each listed once, never spec.Start, and not an empty list.
func (b *Builder) checkGotos(index map[string]int) []string {
	var errs []string
	for _, from := range slices.Sorted(maps.Keys(b.gotos)) {
		targets := b.gotos[from]
		if _, ok := index[from]; !ok {
			errs = append(errs, fmt.Sprintf("Goto of unknown node %q", from))
			continue
		}
		if len(targets) == 0 {
			errs = append(errs, fmt.Sprintf("node %q declares an empty goto list; name its destinations, or leave Goto out to restrict nothing", from))
		}
		seen := map[string]bool{}
		for _, t := range targets {
			_, ok := index[t]
			switch {
			case t == spec.Start:
				errs = append(errs, fmt.Sprintf("node %q declares goto %q: a command cannot route to the entry", from, t))
			case t != spec.End && !ok:
				errs = append(errs, fmt.Sprintf("node %q declares goto to unknown node %q", from, t))
			case seen[t]:
				errs = append(errs, fmt.Sprintf("node %q declares goto %q twice", from, t))
			}
			seen[t] = true
		}
	}
	return errs
}

// gotoDoc returns a document holding only the declared goto lists, for the
// run-time check of a code-built graph (nil when none is declared).
func (b *Builder) gotoDoc() *spec.Graph {
	if len(b.gotos) == 0 {
		return nil
	}
	g := &spec.Graph{}
	for _, n := range b.nodes {
		if ts, ok := b.gotos[n.id]; ok {
			g.Nodes = append(g.Nodes, spec.Node{ID: n.id, Goto: ts})
		}
	}
	return g
}
