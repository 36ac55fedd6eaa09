package spec

import "bytes"

// Clone returns a deep copy of g that shares nothing mutable with it; nil
// stays nil, and nil and empty slices and maps keep that difference (it
// decides what Encode writes). The copy answers Pos like g.
func (g *Graph) Clone() *Graph {
	if g == nil {
		return nil
	}
	c := *g
	c.Extra = g.Extra.clone()
	if g.Channels != nil {
		c.Channels = make([]Channel, len(g.Channels))
		for i, ch := range g.Channels {
			ch.Extra = ch.Extra.clone()
			c.Channels[i] = ch
		}
	}
	if g.Nodes != nil {
		c.Nodes = make([]Node, len(g.Nodes))
		for i, n := range g.Nodes {
			n.Config = cloneBytes(n.Config)
			if n.Goto != nil {
				n.Goto = append([]string{}, n.Goto...)
			}
			n.Extra = n.Extra.clone()
			c.Nodes[i] = n
		}
	}
	if g.Edges != nil {
		c.Edges = make([]Edge, len(g.Edges))
		for i, e := range g.Edges {
			e.When = e.When.clone()
			e.Extra = e.Extra.clone()
			c.Edges[i] = e
		}
	}
	return &c
}

func (e Extra) clone() Extra {
	if e == nil {
		return nil
	}
	c := make(Extra, len(e))
	for k, v := range e {
		c[k] = cloneBytes(v)
	}
	return c
}

func (p *Predicate) clone() *Predicate {
	if p == nil {
		return nil
	}
	c := *p
	if p.Values != nil {
		c.Values = append([]Literal{}, p.Values...)
	}
	c.Extra = p.Extra.clone()
	return &c
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}
