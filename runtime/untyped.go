package runtime

import (
	"encoding/json"
	"fmt"
	"github.com/ilmek-go/ilmek/runtime/internal/contract"
	"maps"
	"slices"

	"github.com/ilmek-go/ilmek/internal/jsonconv"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"

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
	to     int // node index or endNode
	pred   *spec.Predicate
	guard  func(Values) bool
	router func(Values) ([]Goto, error)
	// declared are a RouterTo router's declared targets (node index or
	// endNode); nil for a router that declared none.
	declared map[int]bool
}

var _ program[Values, Values] = (*untyped)(nil)

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

// Reduce folds the updates into a copy of prev. Every value written is
// kept in its JSON form (jsonconv.Normalize: float64 numbers, []any lists,
// map[string]any objects), the form a checkpoint restores, so that a node
// reads a channel the same way whether or not a checkpoint came between
// the write and the read.
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
			var err error
			switch {
			case c.custom != nil:
				var cv any
				if set {
					cv = cur
				}
				nv, cerr := c.custom(cv, v)
				if cerr != nil {
					return nil, i, &ChannelError{Channel: name, Msg: cerr.Error()}
				}
				next[name], err = normalizeWrite(name, nv)
			case c.reducer == spec.Append:
				next[name], err = foldAppend(name, cur, v)
			case c.reducer == spec.Merge:
				next[name], err = foldMerge(name, cur, v)
			default:
				next[name], err = normalizeWrite(name, v)
			}
			if err != nil {
				return nil, i, err
			}
		}
	}
	return next, 0, nil
}

func (u *untyped) Plan(s *Values, from int, pl *contract.Planner[Values]) error {
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
				if e.declared != nil && !e.declared[t.Node()] {
					name := spec.End
					if t.Node() != endNode {
						name = u.shape.Nodes[t.Node()].ID
					}
					return fmt.Errorf("router of %s picked %q, which it does not declare as a target (RouterTo)", u.nodeName(from), name)
				}
				pl.Target(t)
			}
			continue
		case e.pred != nil:
			v, set := (*s)[e.pred.Channel]
			if !e.pred.Holds(v, set) {
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
	if i == startNode {
		return spec.Start
	}
	return fmt.Sprintf("node %q", u.shape.Nodes[i].ID)
}

func (u *untyped) resolve(gotos []Goto) ([]target[Values], error) {
	out := make([]target[Values], 0, len(gotos))
	for _, g := range gotos {
		i := endNode
		if g.Node != spec.End {
			i = u.shape.NodeIndex(g.Node)
			if i < 0 {
				return nil, &UnknownTargetError{Target: g.Node}
			}
		} else if g.Send {
			return nil, &UnknownTargetError{Target: g.Node}
		}
		t := contract.To[Values](i)
		if g.Send {
			// A send's input is folded into an empty state through the
			// channels' reducers, as a run's input is: the task reads append
			// and merge channels as lists and objects, and a write the graph
			// cannot hold is an error of the sender, as in generated code.
			in, _, err := u.Reduce(u.Zero(), []Values{g.Input})
			if err != nil {
				return nil, fmt.Errorf("send to %q: %w", g.Node, err)
			}
			t = contract.Send(i, in)
		}
		out = append(out, t)
	}
	return out, nil
}

func (u *untyped) Run(ctx *Ctx, node int, s Values) (Values, []target[Values], error) {
	up, err := u.nodes[node](ctx, s)
	if err != nil {
		return nil, nil, err
	}
	if gotos, ok := ctx.pendingCommand(); ok {
		targets, err := u.resolve(gotos)
		if err != nil {
			return nil, nil, err
		}
		return up, targets, nil
	}
	return up, nil, nil
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

// EncodeWrites encodes what updates changed from prev to next (see
// WriteEncoder): the channels they name, in the encoding's order (by name),
// an append channel by its appended elements and a merge channel by the
// merged keys.
func (u *untyped) EncodeWrites(dst []checkpoint.ChannelWrite, prev, next *Values, updates []Values) ([]checkpoint.ChannelWrite, bool, error) {
	var buf [8]string
	names := buf[:0]
	for _, up := range updates {
		for name := range up {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for _, name := range names {
		c := u.chans[name]
		old, wasSet := (*prev)[name]
		v := (*next)[name]
		w := checkpoint.ChannelWrite{Channel: name}
		var err error
		switch {
		case c != nil && c.custom == nil && c.reducer == spec.Append:
			ol, _ := old.([]any)
			nl, ok := v.([]any)
			switch {
			case !ok || !wasSet || len(ol) == 0:
				w.Value, err = json.Marshal(v)
			case len(nl) == len(ol):
				continue // nothing appended
			default:
				w.Append = true
				w.Value, err = json.Marshal(nl[len(ol):])
			}
		case c != nil && c.custom == nil && c.reducer == spec.Merge:
			w.Value, w.Merge, err = mergedKeys(name, old, v, updates)
		default:
			if !wasSet {
				return dst, false, nil // the channel enters the encoding
			}
			w.Value, err = json.Marshal(v)
		}
		if err != nil {
			return dst, false, fmt.Errorf("channel %q: %w", name, err)
		}
		if w.Value == nil {
			continue // merged nothing
		}
		dst = append(dst, w)
	}
	return dst, true, nil
}

// mergedKeys encodes merge channel name's write: the members of next whose
// keys the updates merged (nil when they merged none), when the stored object can take them as a merge
// write (ApplyDeltas inserts a new key by its encoded bytes, which is the
// encoder's order only when no key needs escaping), else the whole object.
func mergedKeys(name string, prev, next any, updates []Values) ([]byte, bool, error) {
	om, _ := prev.(map[string]any)
	nm, ok := next.(map[string]any)
	if !ok || len(om) == 0 || !jsonconv.PlainKeys(nm) {
		data, err := json.Marshal(next)
		return data, false, err
	}
	part := map[string]any{}
	for _, up := range updates {
		in, ok := up[name].(map[string]any)
		if !ok {
			if vs, isVals := up[name].(Values); isVals {
				in = vs
			}
		}
		for k := range in {
			part[k] = nm[k]
		}
	}
	if len(part) == 0 {
		return nil, false, nil
	}
	data, err := json.Marshal(part)
	return data, true, err
}
