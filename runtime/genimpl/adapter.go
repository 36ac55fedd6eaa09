package genimpl

import (
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// Adapter serves a generated graph with untyped nodes, the kind a
// runtime.Registry builds for runtime.FromSpec: a generated package's Adapt
// and FromRegistry. It converts the state to runtime.Values and the
// returned values to an update at the boundary, runs the node with the
// real *runtime.Ctx, and turns a command recorded with Ctx.Command into
// the update's Goto.
type Adapter[S, U any] struct {
	// Shape is the graph's static shape; Doc returns its document.
	Shape *runtime.Shape
	Doc   func() (*spec.Graph, error)
	// Values converts a state to the untyped state a node reads.
	Values func(S) (runtime.Values, error)
	// Update converts an untyped update (UpdateOf); a write the graph
	// cannot hold stays in it and fails the fold.
	Update func(runtime.Values) U
	// Fold folds an update into a state (State.With), Failed returns
	// the write of an update that could not be converted: a send's input
	// is the untyped input converted and folded into an empty state.
	Fold   func(S, U) S
	Failed func(*U) *runtime.ChannelError
	// SetGoto sets an update's Goto.
	SetGoto func(*U, []Target[S])
}

// Node serves the generated graph with fn.
func (a *Adapter[S, U]) Node(fn runtime.NodeFunc) func(*runtime.Ctx, S) (U, error) {
	return func(ctx *runtime.Ctx, s S) (U, error) {
		var zero U
		in, err := a.Values(s)
		if err != nil {
			return zero, err
		}
		out, err := fn(ctx, in)
		if err != nil {
			return zero, err
		}
		u := a.Update(out)
		gotos, ok := bridge.Command(ctx)
		if !ok {
			return u, nil
		}
		to := make([]Target[S], 0, len(gotos))
		for _, g := range gotos {
			t, err := a.target(g)
			if err != nil {
				return zero, err
			}
			to = append(to, t)
		}
		a.SetGoto(&u, to)
		return u, nil
	}
}

// target converts an untyped goto target.
func (a *Adapter[S, U]) target(g runtime.Goto) (Target[S], error) {
	i := EndNode
	if g.Node != spec.End {
		if i = a.Shape.NodeIndex(g.Node); i < 0 {
			return Target[S]{}, &runtime.UnknownTargetError{Target: g.Node}
		}
	}
	if !g.Send {
		return To[S](i), nil
	}
	if i == EndNode {
		return Target[S]{}, &runtime.UnknownTargetError{Target: g.Node}
	}
	u := a.Update(g.Input)
	if bad := a.Failed(&u); bad != nil {
		return Target[S]{}, fmt.Errorf("send to %q: %w", g.Node, bad)
	}
	var zero S
	return Send(i, a.Fold(zero, u)), nil
}

// Registry builds node index id with the factory reg has for its type,
// given the node exactly as the document stores it (raw config included),
// and serves it with Node: what a generated FromRegistry builds.
func (a *Adapter[S, U]) Registry(reg runtime.Registry, id int) (func(*runtime.Ctx, S) (U, error), error) {
	fn, err := RegistryNode(reg, a.Doc, id)
	if err != nil {
		return nil, err
	}
	return a.Node(fn), nil
}

// Values builds the untyped state a registry node reads from a generated
// State, keeping the first value that does not convert.
type Values struct {
	v   runtime.Values
	err error
}

// NewValues starts an untyped state of n channels.
func NewValues(n int) Values { return Values{v: make(runtime.Values, n)} }

// Set sets channel to x as it is: a channel of the default type.
func (v *Values) Set(channel string, x any) { v.v[channel] = x }

// JSON sets channel to the untyped value the JSON encoding of x decodes
// to: a channel of a bound type, as an untyped node sees it.
func (v *Values) JSON(channel string, x any) {
	if v.err != nil {
		return
	}
	y, err := ToAny(channel, x)
	if err != nil {
		v.err = err
		return
	}
	v.v[channel] = y
}

// Done returns the state, or the first failure.
func (v *Values) Done() (runtime.Values, error) {
	if v.err != nil {
		return nil, v.err
	}
	return v.v, nil
}

// DecodeRef converts a write to a last_write channel of bound type T
// through JSON, as the pointer an Update holds; nil when it does not
// convert.
func DecodeRef[T any](channel string, v any, typ string) (*T, *runtime.ChannelError) {
	x, bad := DecodeValue[T](channel, v, typ)
	if bad != nil {
		return nil, bad
	}
	return &x, nil
}

// AssertRef converts a write to a last_write channel of interface type T,
// as the pointer an Update holds; nil when it does not convert.
func AssertRef[T any](channel string, v any, typ string) (*T, *runtime.ChannelError) {
	x, bad := AssertValue[T](channel, v, typ)
	if bad != nil {
		return nil, bad
	}
	return &x, nil
}
