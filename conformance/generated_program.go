package conformance

import (
	"context"
	"encoding/json"

	"github.com/ilmek-go/ilmek/runtime"
)

// GeneratedProgram returns the ProgramFunc of one package that ilmekgen
// generated, from the package's own New, FromRegistry and UpdateOf:
//
//	conformance.GeneratedProgram(opgraph.New, opgraph.FromRegistry, opgraph.UpdateOf)
//
// The graph is built with New(FromRegistry(Registry(fx)), opts...); a
// refusal is observed as "invalid". A case's inputs are decoded as the
// spec-built program decodes them and converted with UpdateOf.
func GeneratedProgram[S, U, N any](
	newGraph func(N, ...runtime.Option) (*runtime.Graph[S, U], error),
	fromRegistry func(runtime.Registry) N,
	updateOf func(runtime.Values) U,
	opts ...runtime.Option,
) ProgramFunc {
	return TypedProgram(newGraph, func(fx *Effects) N { return fromRegistry(Registry(fx)) }, updateOf, opts, nil)
}

// TypedProgram returns the ProgramFunc of a generated package served by
// any implementation of its Nodes: nodes(fx) makes one whose effects count
// into fx (hand-written typed nodes, or FromRegistry of a registry). The
// graph is built with New(nodes(fx), graphOpts...) and every run gets
// runOpts (see Drive).
func TypedProgram[S, U, N any](
	newGraph func(N, ...runtime.Option) (*runtime.Graph[S, U], error),
	nodes func(*Effects) N,
	updateOf func(runtime.Values) U,
	graphOpts []runtime.Option,
	runOpts []runtime.RunOption,
) ProgramFunc {
	decode := func(raw json.RawMessage) (U, error) {
		v, err := DecodeValues(raw)
		if err != nil {
			var zero U
			return zero, err
		}
		return updateOf(v), nil
	}
	return func(ctx context.Context, c *Case, fx *Effects, cp runtime.Checkpointer) []Observation {
		g, err := newGraph(nodes(fx), graphOpts...)
		if err != nil {
			return Invalid(err)
		}
		return Drive(ctx, g, c, fx, cp, decode, runOpts...)
	}
}
