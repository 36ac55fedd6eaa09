package spec

import "fmt"

// This file decodes the nodes and edges arrays.

func (d *decoder) nodes(g *Graph) {
	p := d.p
	if k := p.peek(); k != kindArray {
		d.wrongKind("nodes", `"nodes"`, "an array of nodes", k, `write "nodes": [{"id": "agent", "type": "llm"}]`)
		d.check.noNodes = true
		return
	}
	off := p.pos
	g.Nodes = []Node{}
	p.array(func(i int) {
		g.Nodes = append(g.Nodes, d.node(PathIndex("nodes", i)))
	})
	if n := len(g.Nodes); n > d.lim.MaxNodes && !p.failed() {
		d.errAt(off, "nodes", fmt.Sprintf("graph has %d nodes, over the limit of %d", n, d.lim.MaxNodes),
			"split the graph, or raise Limits.MaxNodes with spec.WithLimits")
	}
}

// node reads one node. A node that is not an object is kept as a zero Node,
// so that indexes in g.Nodes stay the document's.
func (d *decoder) node(npath string) Node {
	p := d.p
	var n Node
	d.visit(npath)
	if k := p.peek(); k != kindObject {
		d.wrongKind(npath, "a node", "an object", k, `write {"id": "agent", "type": "llm"}`)
		return n
	}
	p.object(func(key string, keyOff int) {
		path := PathKey(npath, key)
		d.visit(path)
		switch key {
		case "id":
			n.ID = d.str(path, "node id", `write "id": "agent"`)
		case "type":
			n.Type = d.str(path, "node type", `write "type": "llm", naming a registry entry`)
		case "config":
			switch k := p.peek(); k {
			case kindObject, kindNull:
				d.p.onNumber = d.configNumber
				n.Config = d.raw()
				d.p.onNumber = nil
			default:
				d.wrongKind(path, "node config", "an object or null", k,
					`wrap the settings in an object, e.g. "config": {"items": [1, 2]}, or leave config out`)
			}
		case "goto":
			if k := p.peek(); k != kindArray {
				d.wrongKind(path, "node goto", "an array of node ids", k,
					`list where the node's command may route, e.g. "goto": ["measure"]`)
				return
			}
			n.Goto = []string{}
			p.array(func(i int) {
				epath := PathIndex(path, i)
				d.visit(epath)
				n.Goto = append(n.Goto, d.str(epath, "goto target", `write a node id or "__end__", e.g. "goto": ["measure"]`))
			})
		default:
			d.extra(&n.Extra, path, key, keyOff)
		}
	})
	return n
}

func (d *decoder) edges(g *Graph) {
	p := d.p
	if k := p.peek(); k != kindArray {
		d.wrongKind("edges", `"edges"`, "an array of edges", k,
			`write "edges": [{"from": "__start__", "to": "agent"}]`)
		d.check.noEdges = true
		return
	}
	off := p.pos
	g.Edges = []Edge{}
	p.array(func(i int) {
		g.Edges = append(g.Edges, d.edge(PathIndex("edges", i)))
	})
	if n := len(g.Edges); n > d.lim.MaxEdges && !p.failed() {
		d.errAt(off, "edges", fmt.Sprintf("graph has %d edges, over the limit of %d", n, d.lim.MaxEdges),
			"split the graph, or raise Limits.MaxEdges with spec.WithLimits")
	}
}

// edge reads one edge; like node, a non-object is kept as a zero Edge.
func (d *decoder) edge(epath string) Edge {
	p := d.p
	var e Edge
	d.visit(epath)
	if k := p.peek(); k != kindObject {
		d.wrongKind(epath, "an edge", "an object", k, `write {"from": "__start__", "to": "agent"}`)
		return e
	}
	p.object(func(key string, keyOff int) {
		path := PathKey(epath, key)
		d.visit(path)
		switch key {
		case "from":
			e.From = d.str(path, `edge "from"`, `write "from": "<node id>" or "__start__"`)
		case "to":
			e.To = d.str(path, `edge "to"`, `write "to": "<node id>" or "__end__"`)
		case "when":
			if k := p.peek(); k != kindObject {
				d.wrongKind(path, `edge "when"`, "an object", k,
					`write "when": {"channel": "intent", "eq": "buy"}, or leave "when" out to follow the edge always`)
				return
			}
			e.When = d.predicate(path)
		default:
			d.extra(&e.Extra, path, key, keyOff)
		}
	})
	return e
}
