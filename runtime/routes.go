package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/ilmek-go/ilmek/runtime/internal/contract"
	"log/slog"
	"strconv"
	"strings"

	"github.com/ilmek-go/ilmek/spec"
)

// routes is what the executor knows about the static edges of each node,
// to notice a node whose outgoing edges are all guarded and none held: the
// run then ends after it (or goes on without it) without following any of
// its edges, which ilmekgen check warns about but which can still happen.
type routes struct {
	// guarded is, by node index, whether every outgoing edge of the node is
	// guarded (a predicate or a guard function, no static edge, no router).
	// nil when no node is.
	guarded []bool
	// endWhen are, by node index, the guards of the node's edges to __end__
	// when the program does not report a held edge to __end__ to the Planner
	// (generated programs plan nothing for them); nil otherwise.
	endWhen [][]*spec.Predicate
	// gotos are, by node index, the destinations the node's document
	// declares in its "goto" list (node indexes, endNode as len(nodes)),
	// nil for a node that declares none; nil when no node does.
	gotos [][]bool
	// declared are the same lists as written, for the error.
	declared [][]string
}

// UndeclaredGotoError is a command's goto or send naming a destination
// that the node's "goto" list in its document does not declare. It is an
// error of the node (wrapped in a NodeError): the document says where the
// node may route, and the run holds the node to it.
type UndeclaredGotoError struct {
	Node     string   // the node whose command routed
	Target   string   // the destination it named
	Declared []string // the node's declared goto list
}

// Error names the node, the destination and the declared list, and how to
// fix the document.
func (e *UndeclaredGotoError) Error() string {
	q := make([]string, len(e.Declared))
	for i, t := range e.Declared {
		q[i] = strconv.Quote(t)
	}
	return fmt.Sprintf("node %q routes to %q by goto or send, which its document's goto list [%s] does not declare; add %q to the node's \"goto\" list, or route to a declared destination",
		e.Node, e.Target, strings.Join(q, ", "), e.Target)
}

// checkGoto refuses a goto target of node i outside its declared list.
func (r *runner[S, U]) checkGoto(i int, targets []target[S]) error {
	rt := &r.g.routes
	if rt.gotos == nil || rt.gotos[i] == nil {
		return nil
	}
	allowed := rt.gotos[i]
	for _, t := range targets {
		k := t.Node()
		if k == endNode {
			k = len(r.g.ids)
		}
		if k < 0 || k >= len(allowed) || !allowed[k] {
			name := spec.End
			if t.Node() >= 0 && t.Node() < len(r.g.ids) {
				name = r.g.ids[t.Node()]
			}
			return &UndeclaredGotoError{Node: r.g.ids[i], Target: name, Declared: rt.declared[i]}
		}
	}
	return nil
}

// readGotos fills rt.gotos from doc's declared goto lists.
func (rt *routes) readGotos(doc *spec.Graph, ids []string) {
	if doc == nil {
		return
	}
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	index[spec.End] = len(ids)
	for _, n := range doc.Nodes {
		i, ok := index[n.ID]
		if !ok || n.Goto == nil || i == len(ids) {
			continue
		}
		if rt.gotos == nil {
			rt.gotos = make([][]bool, len(ids))
			rt.declared = make([][]string, len(ids))
		}
		allowed := make([]bool, len(ids)+1)
		for _, t := range n.Goto {
			if k, ok := index[t]; ok {
				allowed[k] = true
			}
		}
		rt.gotos[i], rt.declared[i] = allowed, n.Goto
	}
}

// newRoutes reads the routes of p: from the edge definitions of a spec- or
// code-built graph, from the document of any other program. A program
// without a document (Spec fails) gets no routes, and nothing is reported.
func newRoutes[S, U any](p program[S, U], ids []string) routes {
	var rt routes
	nodes := len(ids)
	if u, ok := any(p).(*untyped); ok {
		if u.doc != nil {
			rt.readGotos(u.doc, ids)
		} else if u.builder != nil {
			rt.readGotos(u.builder.gotoDoc(), ids)
		}
		for i := range nodes {
			edges := u.edges[i+1]
			all := len(edges) > 0
			for _, e := range edges {
				if e.router != nil || (e.pred == nil && e.guard == nil) {
					all = false
					break
				}
			}
			if all {
				if rt.guarded == nil {
					rt.guarded = make([]bool, nodes)
				}
				rt.guarded[i] = true
			}
		}
		return rt
	}
	doc, err := p.Spec()
	if err != nil || doc == nil {
		return rt
	}
	rt.readGotos(doc, ids)
	index := make(map[string]int, len(doc.Nodes))
	for i, n := range doc.Nodes {
		index[n.ID] = i
	}
	if len(doc.Nodes) != nodes {
		return rt
	}
	static := make([]bool, nodes)
	leaves := make([]bool, nodes)
	preds := make([][]*spec.Predicate, nodes)
	var ends [][]*spec.Predicate
	for k := range doc.Edges {
		e := &doc.Edges[k]
		i, ok := index[e.From]
		if !ok {
			continue
		}
		leaves[i] = true
		if e.When == nil {
			static[i] = true
			continue
		}
		preds[i] = append(preds[i], e.When)
		if e.To == spec.End {
			if ends == nil {
				ends = make([][]*spec.Predicate, nodes)
			}
			ends[i] = append(ends[i], e.When)
		}
	}
	for i := range nodes {
		// Guards that cover every value (truthy true and false, eq v and
		// neq v on one channel) always let one edge through: such a node
		// needs no check, and the state is never encoded for it.
		if leaves[i] && !static[i] && !covers(preds[i]) {
			if rt.guarded == nil {
				rt.guarded = make([]bool, nodes)
			}
			rt.guarded[i] = true
		}
	}
	if rt.guarded != nil {
		rt.endWhen = ends
	}
	return rt
}

// covers reports whether guards together hold for every value by the rule
// of ilmekgen check's coverage warning: truthy true with truthy false, or
// eq v with neq v, on one channel.
func covers(guards []*spec.Predicate) bool {
	for i, a := range guards {
		for _, b := range guards[i+1:] {
			if a.Channel != b.Channel {
				continue
			}
			switch {
			case a.Op == spec.OpTruthy && b.Op == spec.OpTruthy && a.Value.Bool != b.Value.Bool:
				return true
			case (a.Op == spec.OpEq && b.Op == spec.OpNeq || a.Op == spec.OpNeq && b.Op == spec.OpEq) && sameLiteral(a.Value, b.Value):
				return true
			}
		}
	}
	return false
}

// sameLiteral reports whether two literals are equal, numbers by value.
func sameLiteral(a, b spec.Literal) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case spec.LitString:
		return a.Str == b.Str
	case spec.LitBool:
		return a.Bool == b.Bool
	case spec.LitNumber:
		return a.Float() == b.Float()
	}
	return true // null
}

// noEdgeHeld reports whether the guarded node i planned nothing at all
// (held counts the Planner's targets before Plan) and, for a program that
// does not report edges to __end__, none of those guards holds on s either.
// It runs only after a guarded node planned no target; its cost (encoding
// the state) is paid only for nodes with guarded edges to __end__.
func (r *runner[S, U]) noEdgeHeld(i int, held int, s *S) bool {
	rt := &r.g.routes
	if rt.guarded == nil || !rt.guarded[i] || contract.Held(r.planner) != held {
		return false
	}
	if rt.endWhen == nil || len(rt.endWhen[i]) == 0 {
		return true
	}
	data, err := r.p.EncodeState(*s)
	if err != nil {
		return false // cannot tell; say nothing rather than something false
	}
	var vals map[string]any
	if err := json.Unmarshal(data, &vals); err != nil {
		return false
	}
	for _, p := range rt.endWhen[i] {
		v, set := vals[p.Channel]
		if p.Holds(v, set) {
			return false
		}
	}
	return true
}

// reportNoEdge records that node i's guarded edges all failed this
// superstep: once per node in the state event's NoEdgeHeld, and as a Warn
// record through the run's (or the graph's) logger.
func (r *runner[S, U]) reportNoEdge(i int) {
	id := r.g.ids[i]
	for _, n := range r.noEdge {
		if n == id {
			return
		}
	}
	r.noEdge = append(r.noEdge, id)
	l := r.cfg.logger
	if l == nil {
		l = r.g.logger
	}
	if l != nil {
		l.LogAttrs(context.Background(), slog.LevelWarn, "no outgoing edge held",
			slog.String("graph", r.g.shape.Name), slog.String("thread", r.info.threadID), slog.String("run", r.info.runID),
			slog.Int("step", r.step+1), slog.String("node", id),
			slog.String("hint", "every outgoing edge of the node is guarded and none held on the state after the superstep; add an edge that always holds (e.g. to __end__) or cover the remaining values"))
	}
}

// checkTargets returns an *UnknownTargetError for a target of a command
// that names no node of the graph, or sends to spec.End: a program hands
// node indexes, which only a generated package's own constants keep in
// range.
func (r *runner[S, U]) checkTargets(targets []target[S]) error {
	for _, t := range targets {
		i := t.Node()
		switch {
		case i >= 0 && i < len(r.g.ids):
		case i == endNode && !t.IsSend():
		case i == endNode:
			return &UnknownTargetError{Target: spec.End}
		default:
			return &UnknownTargetError{Target: "NodeID(" + strconv.Itoa(i) + ")"}
		}
	}
	return nil
}
