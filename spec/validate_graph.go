package spec

import (
	"fmt"
	"sort"
	"strings"
)

// This file holds the checks that span the graph: edge endpoints, guards,
// the entry edge, reachability and repeated edges.

func (c *checker) edges(ids map[string]int, channels map[string]bool) {
	nodeIDs := make([]string, 0, len(ids))
	for id := range ids {
		nodeIDs = append(nodeIDs, id)
	}
	sort.Strings(nodeIDs)
	for i, e := range c.g.Edges {
		epath := PathIndex("edges", i)
		fpath, tpath := PathKey(epath, "from"), PathKey(epath, "to")
		c.text(fpath, e.From)
		c.text(tpath, e.To)
		name := fmt.Sprintf("edge %s -> %s", quote(e.From), quote(e.To))
		switch {
		case e.From == "":
			c.errorf(fpath, `write "from": "<node id>" or "__start__"`, `edge has no "from"`)
		case e.From == End:
			c.errorf(fpath, "__end__ is the graph's exit: edges reach it but never leave it",
				"%s: an edge cannot leave __end__", name)
		case e.From != Start && !c.opts.noNodes && !hasKey(ids, e.From):
			c.errorf(fpath, didYouMean(e.From, nodeIDs)+"declare a node with that id, or start the edge at an existing node",
				"edge from unknown node %s -> %s", quote(e.From), quote(e.To))
		}
		switch {
		case e.To == "":
			c.errorf(tpath, `write "to": "<node id>" or "__end__"`, `edge has no "to"`)
		case e.To == Start:
			c.errorf(tpath, "__start__ is the graph's entry: edges leave it but never reach it",
				"%s: an edge cannot reach __start__", name)
		case e.To != End && !c.opts.noNodes && !hasKey(ids, e.To):
			c.errorf(tpath, didYouMean(e.To, nodeIDs)+"declare a node with that id, or point the edge at an existing node",
				"edge %s -> unknown node %s", quote(e.From), quote(e.To))
		}
		if e.When != nil {
			if !c.predicate(PathKey(epath, "when"), e.When, channels) {
				if c.badGuard == nil {
					c.badGuard = map[int]bool{}
				}
				c.badGuard[i] = true
			}
		}
		c.extra(epath, name, e.Extra, edgeFields)
	}
}

// gotos checks every node's declared goto list: each target is a declared
// node or __end__, never __start__ or empty, and listed once; the list
// itself is not empty (leave the member out to declare nothing).
func (c *checker) gotos(ids map[string]int) {
	var nodeIDs []string
	for i, n := range c.g.Nodes {
		if n.Goto == nil {
			continue
		}
		gpath := PathKey(PathIndex("nodes", i), "goto")
		if len(n.Goto) == 0 {
			c.errorf(gpath, `list the nodes the command may route to, e.g. "goto": ["measure"], or leave the member out`,
				"node %s: an empty goto list declares nothing", quote(n.ID))
			continue
		}
		seen := make(map[string]int, len(n.Goto))
		for k, t := range n.Goto {
			tpath := PathIndex(gpath, k)
			c.text(tpath, t)
			switch {
			case t == "":
				c.errorf(tpath, `write a node id or "__end__"`, "node %s: goto target is empty", quote(n.ID))
			case t == Start:
				c.errorf(tpath, "__start__ is the graph's entry: a goto never reaches it; name the first node instead",
					"node %s: goto cannot name __start__", quote(n.ID))
			case t != End && !c.opts.noNodes && !hasKey(ids, t):
				if nodeIDs == nil {
					nodeIDs = make([]string, 0, len(ids))
					for id := range ids {
						nodeIDs = append(nodeIDs, id)
					}
					sort.Strings(nodeIDs)
				}
				c.errorf(tpath, didYouMean(t, nodeIDs)+"declare a node with that id, or name an existing node or __end__",
					"node %s: goto names unknown node %s", quote(n.ID), quote(t))
			}
			if first, dup := seen[t]; dup && t != "" {
				c.errorf(tpath, "list each target once", "node %s: goto lists %s twice (first at %s)", quote(n.ID), quote(t), c.where(PathIndex(gpath, first)))
			} else {
				seen[t] = k
			}
		}
	}
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// predicate checks the guard p at wpath. It reports whether its operator
// and literal are valid, so that the guard can be described as written;
// the decoder's errors, suppressed here, count too.
func (c *checker) predicate(wpath string, p *Predicate, channels map[string]bool) bool {
	cpath := PathKey(wpath, "channel")
	c.text(cpath, p.Channel)
	c.extra(wpath, "predicate", p.Extra, predicateFields)
	switch {
	case p.Channel == "":
		c.errorf(cpath, `name the channel to test, e.g. {"channel": "intent", "eq": "buy"}`, "predicate channel is missing or empty")
	case !c.opts.noChannels && !channels[p.Channel]:
		names := make([]string, 0, len(channels))
		for n := range channels {
			names = append(names, n)
		}
		sort.Strings(names)
		c.errorf(cpath, didYouMean(p.Channel, names)+fmt.Sprintf(`declare it under "channels", e.g. %s: {}`, quote(p.Channel)),
			"predicate references channel %s, which this spec does not declare", quote(p.Channel))
	}
	errs := c.errs
	opPath := PathKey(wpath, string(p.Op))
	switch {
	case p.Op == "":
		c.errorf(wpath, "add exactly one of "+list(Ops), "predicate has no operator")
		return false
	case !isOp(p.Op):
		c.errorf(wpath, didYouMean(string(p.Op), predicateFields)+"use one of "+list(Ops),
			"predicate has unknown operator %s", quote(string(p.Op)))
		return false
	}
	if p.Op != OpIn && p.Values != nil {
		c.errorf(opPath, "set Value, not Values, for every operator but in", "%s takes one literal, but Values is set", p.Op)
	}
	// A literal the decoder refused is left at its zero value (null).
	refused := c.opts.bad[opPath]
	switch p.Op {
	case OpEq, OpNeq:
		c.literal(opPath, string(p.Op)+" literal", p.Value)
	case OpIn:
		for j, l := range p.Values {
			lpath := PathIndex(opPath, j)
			refused = refused || c.opts.bad[lpath]
			c.literal(lpath, "in element literal", l)
		}
	case OpGt, OpLt:
		if p.Value.Kind != LitNumber {
			c.errorf(opPath, fmt.Sprintf(`write a JSON number without quotes, e.g. "%s": 3`, p.Op),
				"%s literal must be a number, not %s", p.Op, litKindName(p.Value.Kind))
		} else {
			c.literal(opPath, string(p.Op)+" literal", p.Value)
		}
	case OpTruthy:
		if p.Value.Kind != LitBool {
			c.errorf(opPath, `write "truthy": true or "truthy": false`,
				"truthy literal must be a boolean, not %s", litKindName(p.Value.Kind))
		}
	}
	return c.errs == errs && !refused
}

func litKindName(k LitKind) string {
	switch k {
	case LitNull:
		return "null"
	case LitString:
		return "a string"
	case LitNumber:
		return "a number"
	case LitBool:
		return "a boolean"
	}
	return fmt.Sprintf("LitKind(%d)", k)
}

// literal checks a literal of a graph built in Go.
func (c *checker) literal(path, what string, l Literal) {
	switch l.Kind {
	case LitNull, LitBool:
	case LitString:
		c.text(path, l.Str)
	case LitNumber:
		if !c.opts.parsed && !validNumber(l.Num) {
			c.errorf(path, `set Num to JSON number text, e.g. "3" or "-1.5e3"`, "%s has invalid number text %s", what, quote(l.Num))
		}
	default:
		c.errorf(path, "use LitNull, LitString, LitNumber or LitBool", "%s has unknown kind %d", what, l.Kind)
	}
}

// graph checks the graph as a whole: the entry edge, nodes no path from
// __start__ reaches, and repeated edges.
func (c *checker) graph(ids map[string]int) {
	g := c.g
	if c.opts.noEdges {
		return
	}
	next := make(map[string][]string)
	entry := false
	for _, e := range g.Edges {
		next[e.From] = append(next[e.From], e.To)
		entry = entry || e.From == Start
	}
	for _, n := range g.Nodes {
		next[n.ID] = append(next[n.ID], n.Goto...) // declared dynamic destinations
	}
	if !entry {
		c.errorf("edges", `add an edge {"from": "__start__", "to": "<first node>"}`, "graph has no entry edge")
	}
	c.repeatedEdges()
	if c.opts.noNodes {
		return
	}
	seen := map[string]bool{Start: true}
	queue := []string{Start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range next[n] {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
			}
		}
	}
	for i, n := range g.Nodes {
		if first, ok := ids[n.ID]; ok && first == i && !seen[n.ID] {
			c.warnf(PathIndex("nodes", i), `add an edge to it, list it in the "goto" of the node whose command or send reaches it, or remove it`,
				"node %s is unreachable from __start__", quote(n.ID))
		}
	}
	c.coverage(ids)
}

// coverage warns about every node (and __start__) whose outgoing edges are
// all guarded and together may all fail: when none holds, the run ends
// after the node's task without a word. Outgoing edges cover every value
// when one of them is static (unguarded, including one to __end__), when
// one channel has both truthy true and truthy false, or when one channel
// has both eq v and neq v with the same literal (numbers by value).
// Anything else warns, even guards that cover every value in a way this
// rule does not see (gt 1 and lt 2): add a static edge, e.g. to __end__.
// A node with a guard whose operator or literal is in error (an unknown
// operator, a literal of the wrong kind) is not described: the error
// already is, and the guard's text would be garbled.
func (c *checker) coverage(ids map[string]int) {
	if c.opts.bad["edges"] {
		return
	}
	type outgoing struct {
		first  int   // the first edge from the node
		guards []int // indexes of its guarded edges
		static bool
	}
	byFrom := make(map[string]*outgoing)
	var order []string
	for i, e := range c.g.Edges {
		if e.From == "" || e.To == "" {
			continue
		}
		o := byFrom[e.From]
		if o == nil {
			o = &outgoing{first: i}
			byFrom[e.From] = o
			order = append(order, e.From)
		}
		if e.When == nil {
			o.static = true
		} else {
			o.guards = append(o.guards, i)
		}
	}
	for _, from := range order {
		o := byFrom[from]
		if o.static || c.anyBadGuard(o.guards) || c.covers(o.guards) {
			continue
		}
		path, what := PathIndex("edges", o.first), "__start__"
		if i, ok := ids[from]; ok {
			path, what = PathIndex("nodes", i), "node "+quote(from)
		}
		guards := make([]string, 0, 4)
		for k, i := range o.guards {
			if k == 3 {
				guards = append(guards, fmt.Sprintf("and %d more", len(o.guards)-k))
				break
			}
			guards = append(guards, predicateText(c.g.Edges[i].When))
		}
		c.warnf(path, fmt.Sprintf(`add an unguarded edge after them, e.g. {"from": %s, "to": "__end__"}, or cover every value (eq v with neq v)`, quote(from)),
			"%s: every outgoing edge is guarded (%s) and none may hold, so a run can end there",
			what, strings.Join(guards, "; "))
	}
}

// anyBadGuard reports whether the guard of one of edges is in error.
func (c *checker) anyBadGuard(edges []int) bool {
	for _, i := range edges {
		if c.badGuard[i] {
			return true
		}
	}
	return false
}

// covers reports whether the guards of edges, together, hold for every
// value by the rule of coverage.
func (c *checker) covers(edges []int) bool {
	seen := make(map[string]bool, len(edges))
	for _, i := range edges {
		p := c.g.Edges[i].When
		var key, complement string
		switch p.Op {
		case OpTruthy:
			key = fmt.Sprintf("%q t%t", p.Channel, p.Value.Bool)
			complement = fmt.Sprintf("%q t%t", p.Channel, !p.Value.Bool)
		case OpEq, OpNeq:
			lit := literalKey(p.Value)
			key = fmt.Sprintf("%q %s %s", p.Channel, p.Op, lit)
			other := OpNeq
			if p.Op == OpNeq {
				other = OpEq
			}
			complement = fmt.Sprintf("%q %s %s", p.Channel, other, lit)
		default:
			continue
		}
		if seen[complement] {
			return true
		}
		seen[key] = true
	}
	return false
}

// literalKey is equal for two literals exactly when they are equal,
// comparing numbers by value.
func literalKey(l Literal) string {
	switch l.Kind {
	case LitString:
		return fmt.Sprintf("s%q", l.Str)
	case LitNumber:
		if validNumber(l.Num) {
			return "n" + normNumber(l.Num)
		}
		return fmt.Sprintf("x%q", l.Num)
	case LitBool:
		return fmt.Sprintf("b%t", l.Bool)
	}
	return "null"
}

// predicateText writes p for a message: `amount gt 1000`.
func predicateText(p *Predicate) string {
	lit := func(l Literal) string {
		switch l.Kind {
		case LitString:
			return quote(l.Str)
		case LitNumber:
			return l.Num
		case LitBool:
			return fmt.Sprint(l.Bool)
		}
		return "null"
	}
	if p.Op == OpIn {
		vals := make([]string, len(p.Values))
		for i, l := range p.Values {
			vals[i] = lit(l)
		}
		return fmt.Sprintf("%s in [%s]", quote(p.Channel), strings.Join(vals, ", "))
	}
	return fmt.Sprintf("%s %s %s", quote(p.Channel), p.Op, lit(p.Value))
}

// repeatedEdges warns about edges with the same from, to and guard as an
// earlier one.
func (c *checker) repeatedEdges() {
	first := make(map[string]int, len(c.g.Edges))
	for i, e := range c.g.Edges {
		if e.From == "" || e.To == "" {
			continue
		}
		key := edgeKey(e)
		if j, dup := first[key]; dup {
			c.warnf(PathIndex("edges", i), "remove one of them: identical edges route the same way",
				"edge %s -> %s repeats %s", quote(e.From), quote(e.To), c.where(PathIndex("edges", j)))
			continue
		}
		first[key] = i
	}
}

// edgeKey identifies an edge by from, to and guard, comparing number
// literals by value.
func edgeKey(e Edge) string {
	var b strings.Builder
	b.WriteString(fmt.Sprintf("%q %q", e.From, e.To))
	if p := e.When; p != nil {
		b.WriteString(fmt.Sprintf(" %q %q", p.Channel, p.Op))
		lits := p.Values
		if p.Op != OpIn {
			lits = []Literal{p.Value}
		}
		for _, l := range lits {
			switch l.Kind {
			case LitString:
				b.WriteString(fmt.Sprintf(" s%q", l.Str))
			case LitNumber:
				if validNumber(l.Num) {
					b.WriteString(" n" + normNumber(l.Num))
				} else {
					b.WriteString(fmt.Sprintf(" x%q", l.Num))
				}
			default:
				b.WriteString(fmt.Sprintf(" k%d %t", l.Kind, l.Bool))
			}
		}
		if p.Op == OpIn {
			b.WriteString(fmt.Sprintf(" #%d", len(lits)))
		}
	}
	return b.String()
}
