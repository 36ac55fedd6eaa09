package runtime

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/ilmek-go/ilmek/spec"
)

// untyped is the Program of graphs built from a spec at run time or in Go
// code: state and updates are Values.
type untyped struct {
	shape   *Shape
	nodes   []NodeFunc
	chans   map[string]*channelDef
	edges   [][]edgeDef // by from index + 1; [0] leaves spec.Start
	doc     *spec.Graph // the document it was built from, nil for code
	builder *Builder    // the builder, for ToSpec of code-built graphs
}

type channelDef struct {
	name    string
	reducer spec.Reducer // "" for custom
	custom  ReducerFunc
}

type edgeDef struct {
	to     int // node index or EndNode
	pred   *spec.Predicate
	guard  func(Values) bool
	router func(Values) ([]Goto, error)
	// declared are a RouterTo router's declared targets (node index or
	// EndNode); nil for a router that declared none.
	declared map[int]bool
}

var _ Program[Values, Values] = (*untyped)(nil)

func (u *untyped) Describe() *Shape { return u.shape }

// Zero returns a state with every append channel [] and merge channel {}.
func (u *untyped) Zero() Values {
	s := Values{}
	for _, c := range u.shape.Channels {
		switch spec.Reducer(c.Reducer) {
		case spec.Append:
			s[c.Name] = []any{}
		case spec.Merge:
			s[c.Name] = map[string]any{}
		}
	}
	return s
}

func (u *untyped) Reduce(prev Values, updates []Values) (Values, int, error) {
	next := maps.Clone(prev)
	if next == nil {
		next = Values{}
	}
	for i, up := range updates {
		for name, v := range up {
			c := u.chans[name]
			if c == nil {
				return nil, i, errUndeclared(name, u.shape.Channels)
			}
			cur, set := next[name]
			switch {
			case c.custom != nil:
				var cv any
				if set {
					cv = cur
				}
				nv, err := c.custom(cv, v)
				if err != nil {
					return nil, i, &ChannelError{Channel: name, Msg: err.Error()}
				}
				next[name] = nv
			case c.reducer == spec.Append:
				next[name] = foldAppend(cur, v)
			case c.reducer == spec.Merge:
				m, err := foldMerge(name, cur, v)
				if err != nil {
					return nil, i, err
				}
				next[name] = m
			default:
				next[name] = v
			}
		}
	}
	return next, 0, nil
}

func (u *untyped) Plan(s *Values, from int, pl *Planner[Values]) error {
	for _, e := range u.edges[from+1] {
		switch {
		case e.router != nil:
			gotos, err := e.router(*s)
			if err != nil {
				return fmt.Errorf("router of %s: %w", u.nodeName(from), err)
			}
			targets, err := u.resolve(gotos)
			if err != nil {
				return fmt.Errorf("router of %s: %w", u.nodeName(from), err)
			}
			for _, t := range targets {
				if e.declared != nil && !e.declared[t.Node] {
					name := spec.End
					if t.Node != EndNode {
						name = u.shape.Nodes[t.Node].ID
					}
					return fmt.Errorf("router of %s picked %q, which it does not declare as a target (RouterTo)", u.nodeName(from), name)
				}
				pl.Target(t)
			}
			continue
		case e.pred != nil:
			v, set := (*s)[e.pred.Channel]
			if !Holds(e.pred, v, set) {
				continue
			}
		case e.guard != nil:
			if !e.guard(*s) {
				continue
			}
		}
		pl.Node(e.to)
	}
	return nil
}

func (u *untyped) nodeName(i int) string {
	if i == StartNode {
		return spec.Start
	}
	return fmt.Sprintf("node %q", u.shape.Nodes[i].ID)
}

func (u *untyped) resolve(gotos []Goto) ([]Target[Values], error) {
	out := make([]Target[Values], 0, len(gotos))
	for _, g := range gotos {
		i := EndNode
		if g.Node != spec.End {
			i = u.shape.NodeIndex(g.Node)
			if i < 0 {
				return nil, &UnknownTargetError{Target: g.Node}
			}
		} else if g.Send {
			return nil, &UnknownTargetError{Target: g.Node}
		}
		t := Target[Values]{Node: i, Send: g.Send}
		if g.Send {
			// A send's input is folded into an empty state through the
			// channels' reducers, as a run's input is: the task reads append
			// and merge channels as lists and objects, and a write the graph
			// cannot hold is an error of the sender, as in generated code.
			in, _, err := u.Reduce(u.Zero(), []Values{g.Input})
			if err != nil {
				return nil, fmt.Errorf("send to %q: %w", g.Node, err)
			}
			t.Input = in
		}
		out = append(out, t)
	}
	return out, nil
}

func (u *untyped) Run(ctx *Ctx, node int, s Values) (Values, error) {
	up, err := u.nodes[node](ctx, s)
	if err != nil {
		return nil, err
	}
	if gotos, ok := ctx.PendingCommand(); ok {
		targets, err := u.resolve(gotos)
		if err != nil {
			return nil, err
		}
		SetGoto(ctx, targets)
	}
	return up, nil
}

func (u *untyped) EncodeState(s Values) ([]byte, error) { return json.Marshal(s) }

func (u *untyped) DecodeState(data []byte) (Values, error) {
	var s Values
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	if s == nil {
		s = Values{}
	}
	return s, nil
}

func (u *untyped) Spec() (*spec.Graph, error) {
	if u.doc != nil {
		return u.doc.Clone(), nil
	}
	return u.builder.toSpec()
}
