package server

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// PendingView is an open interrupt in a thread's view (GET /threads/{id},
// GET /threads): the runtime's entry and, for one asked inside a subgraph,
// where inside.
type PendingView struct {
	runtime.PendingInterrupt
	// Path lists the task keys of the subgraph nodes from the thread's
	// graph down to the child that asked, outermost first (an event's ns
	// for that child); empty for the thread's own interrupts. Node is the
	// thread's subgraph node, the first of them.
	Path []string `json:"path,omitempty"`
	// ChildNode is the node inside the innermost child that asked; empty
	// for the thread's own interrupts.
	ChildNode string `json:"child_node,omitempty"`
}

// SubgraphView is where one child run stands inside a task of the
// thread's graph (runtime.Thread.Subgraphs): a child of a paused thread,
// or one a crash or a failure left in flight.
type SubgraphView struct {
	// Path lists the task keys from the thread's graph down to this child,
	// outermost first.
	Path []string `json:"path"`
	// Node is the subgraph node that runs the child, in the graph one
	// level up.
	Node         string          `json:"node"`
	CheckpointID string          `json:"checkpoint_id"`
	Step         int             `json:"step"`
	Values       json.RawMessage `json:"values,omitempty"`
	// Next lists the child's nodes that run next.
	Next []string `json:"next"`
	// Pending lists the ids of the interrupts the child waits on, as the
	// thread's pending list names them (answer them by these ids).
	Pending []string `json:"pending"`
}

// mayHoldChildren reports whether a thread at ts may have children to
// read: one of its interrupts has a path-qualified id (asked inside a
// subgraph), or a planned task runs a "subgraph" node of shape. It spares
// the reads of runtime.Thread.Subgraphs for threads of graphs without
// subgraphs.
func mayHoldChildren(ts threadState, shape *runtime.Shape) bool {
	if ts.Checkpoint == nil || len(ts.Checkpoint.Next) == 0 {
		return false
	}
	for _, p := range ts.Open {
		if strings.Contains(p.ID, "/") {
			return true
		}
	}
	for _, t := range ts.Checkpoint.Next {
		if i := slices.IndexFunc(shape.Nodes, func(n runtime.NodeShape) bool { return n.ID == t.Node }); i >= 0 && shape.Nodes[i].Type == spec.SubgraphType {
			return true
		}
	}
	return false
}

// taskNode is the node of the task with key in cp's plan (key itself when
// cp plans no such task).
func taskNode(cp *runtime.Checkpoint, key string) string {
	if cp != nil {
		for _, t := range cp.Next {
			if t.Key == key {
				return t.Node
			}
		}
	}
	return key
}

// childCheckpoints indexes the children of ts by their path.
func childCheckpoints(ts threadState) map[string]*runtime.Checkpoint {
	out := make(map[string]*runtime.Checkpoint, len(ts.Children)+1)
	out[""] = ts.Checkpoint
	for _, c := range ts.Children {
		out[strings.Join(c.Path, "/")] = c.Checkpoint
	}
	return out
}

// pendingViews is ts.Open, each entry with the path to the child that
// asked and the node there.
func pendingViews(ts threadState) []PendingView {
	out := make([]PendingView, len(ts.Open))
	for i, p := range ts.Open {
		out[i] = PendingView{PendingInterrupt: p}
	}
	// The deepest child whose own pending list holds an id asked it.
	for _, c := range ts.Children {
		if c.Checkpoint == nil {
			continue
		}
		prefix := strings.Join(c.Path, "/") + "/"
		for _, cp := range c.Checkpoint.Pending {
			for i := range out {
				if out[i].ID == prefix+cp.ID && len(c.Path) > len(out[i].Path) {
					out[i].Path, out[i].ChildNode = slices.Clone(c.Path), cp.Node
				}
			}
		}
	}
	return out
}

// subgraphViews is ts.Children as the thread's view shows them.
func subgraphViews(ts threadState) []SubgraphView {
	if len(ts.Children) == 0 {
		return nil
	}
	cps := childCheckpoints(ts)
	out := make([]SubgraphView, 0, len(ts.Children))
	for _, c := range ts.Children {
		if c.Checkpoint == nil {
			continue
		}
		up := cps[strings.Join(c.Path[:len(c.Path)-1], "/")]
		v := SubgraphView{Path: c.Path, Node: taskNode(up, c.Path[len(c.Path)-1]), CheckpointID: c.Checkpoint.ID,
			Step: c.Checkpoint.Step, Values: c.Checkpoint.Channels, Next: []string{}, Pending: []string{}}
		for _, t := range c.Checkpoint.Next {
			if !slices.Contains(v.Next, t.Node) {
				v.Next = append(v.Next, t.Node)
			}
		}
		prefix := strings.Join(c.Path, "/") + "/"
		for _, p := range c.Checkpoint.Pending {
			v.Pending = append(v.Pending, prefix+p.ID)
		}
		out = append(out, v)
	}
	return out
}

// highlight is where a thread stands, as runtime.ThreadMermaid draws it,
// and inside each child of ts.Children (drawn when the diagram expands
// subgraphs): a child's nodes planned next and waiting on a person, in the
// block of the subgraph node that runs it.
func highlight(ts *threadState) *mermaid.Highlight {
	h := &mermaid.Highlight{}
	if ts.Checkpoint != nil {
		for _, t := range ts.Checkpoint.Next {
			h.Next = append(h.Next, t.Node)
		}
	}
	for _, p := range ts.Open {
		h.Pending = append(h.Pending, p.Node)
	}
	if len(ts.Children) == 0 {
		return h
	}
	cps := childCheckpoints(*ts)
	for _, c := range ts.Children {
		at := h
		for i, key := range c.Path {
			node := taskNode(cps[strings.Join(c.Path[:i], "/")], key)
			if at.Subgraphs == nil {
				at.Subgraphs = map[string]*mermaid.Highlight{}
			}
			if at.Subgraphs[node] == nil {
				at.Subgraphs[node] = &mermaid.Highlight{}
			}
			at = at.Subgraphs[node]
		}
		if c.Checkpoint != nil {
			for _, t := range c.Checkpoint.Next {
				at.Next = append(at.Next, t.Node)
			}
			for _, p := range c.Checkpoint.Pending {
				at.Pending = append(at.Pending, p.Node)
			}
		}
	}
	return h
}
