package runtime

import (
	"context"
	"encoding/json"
	"log/slog"

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
}

// newRoutes reads the routes of p: from the edge definitions of a spec- or
// code-built graph, from the document of any other program. A program
// without a document (Spec fails) gets no routes, and nothing is reported.
func newRoutes[S, U any](p Program[S, U], nodes int) routes {
	var rt routes
	if u, ok := any(p).(*untyped); ok {
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
	index := make(map[string]int, len(doc.Nodes))
	for i, n := range doc.Nodes {
		index[n.ID] = i
	}
	if len(doc.Nodes) != nodes {
		return rt
	}
	static := make([]bool, nodes)
	leaves := make([]bool, nodes)
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
		if e.To == spec.End {
			if ends == nil {
				ends = make([][]*spec.Predicate, nodes)
			}
			ends[i] = append(ends[i], e.When)
		}
	}
	for i := range nodes {
		if leaves[i] && !static[i] {
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

// noEdgeHeld reports whether the guarded node i planned nothing at all
// (held counts the Planner's targets before Plan) and, for a program that
// does not report edges to __end__, none of those guards holds on s either.
// It runs only after a guarded node planned no target; its cost (encoding
// the state) is paid only for nodes with guarded edges to __end__.
func (r *runner[S, U]) noEdgeHeld(i int, held int, s *S) bool {
	rt := &r.g.routes
	if rt.guarded == nil || !rt.guarded[i] || r.planner.held != held {
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
		if Holds(p, v, set) {
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
