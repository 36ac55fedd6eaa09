package genimpl

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// Static implements the methods of a generated program that its document
// alone fixes — Describe, Zero, EncodeState, DecodeState and Spec — for a
// program that embeds it; the program writes Reduce, Plan, Run and
// EncodeWrites, the hot path, itself. S is the package's State, PS *State,
// whose MarshalJSON and UnmarshalJSON are the checkpoint encoding.
type Static[S json.Marshaler, PS interface {
	*S
	json.Unmarshaler
}] struct {
	// Shape is the graph's static shape.
	Shape *runtime.Shape
	// Doc returns the document the package was generated from.
	Doc func() (*spec.Graph, error)
}

// Describe returns the graph's static shape.
func (p *Static[S, PS]) Describe() *runtime.Shape { return p.Shape }

// Zero returns the state of a thread on which nothing was written.
func (p *Static[S, PS]) Zero() S {
	var s S
	return s
}

// EncodeState writes s as the JSON object of its channels.
// (Called on s itself, not on &s, so that s stays on the stack.)
func (p *Static[S, PS]) EncodeState(s S) ([]byte, error) { return s.MarshalJSON() }

// DecodeState reads a state written by EncodeState.
func (p *Static[S, PS]) DecodeState(data []byte) (S, error) {
	var s S
	err := PS(&s).UnmarshalJSON(data)
	return s, err
}

// Spec returns a copy of the document the package was generated from.
func (p *Static[S, PS]) Spec() (*spec.Graph, error) {
	g, err := p.Doc()
	if err != nil {
		return nil, err
	}
	return g.Clone(), nil
}

// ShapeOf returns the static shape of the document doc returns: a
// generated package's shape, which nodes see through Ctx.Graph. The
// document is the package's own, checked when it was generated; one that
// does not decode (a generated file edited by hand) panics.
func ShapeOf(doc func() (*spec.Graph, error)) *runtime.Shape {
	g, err := doc()
	if err != nil {
		panic("genimpl: the generated package's document does not decode; run go generate: " + err.Error())
	}
	s := &runtime.Shape{Nodes: make([]runtime.NodeShape, len(g.Nodes)), Channels: make([]runtime.ChannelShape, len(g.Channels))}
	if g.NameKind == spec.Set {
		s.Name = g.Name
	}
	for i, n := range g.Nodes {
		s.Nodes[i] = runtime.NodeShape{ID: n.ID, Type: n.Type}
	}
	for i, c := range g.Channels {
		s.Channels[i] = runtime.ChannelShape{Name: c.Name, Reducer: string(c.Kind())}
	}
	slices.SortFunc(s.Channels, func(a, b runtime.ChannelShape) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// NodeName is the String of a generated NodeID: node i's id in shape,
// "__end__" for EndNode, NodeID(i) for an index the graph does not have.
func NodeName(shape *runtime.Shape, i int) string {
	switch {
	case i == EndNode:
		return spec.End
	case i >= 0 && i < len(shape.Nodes):
		return shape.Nodes[i].ID
	}
	return "NodeID(" + strconv.Itoa(i) + ")"
}
