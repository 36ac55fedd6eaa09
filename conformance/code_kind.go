package conformance

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// CodeKind is the program kind built in Go with runtime.NewBuilder: each
// case's document is written out as Builder calls (channels, TypedNode with
// the registry's node functions, Edge and EdgeWhen), so code-built graphs
// are held to the same cases as the other kinds.
type CodeKind struct{}

// Name returns "code".
func (CodeKind) Name() string { return "code" }

// RunAll runs each case in process.
func (CodeKind) RunAll(ctx context.Context, cases []*Case, newCP func() runtime.Checkpointer) ([][]Observation, error) {
	out := make([][]Observation, len(cases))
	for i, c := range cases {
		out[i] = runCodeKind(ctx, c, newCP)
	}
	return out, nil
}

func runCodeKind(ctx context.Context, c *Case, newCP func() runtime.Checkpointer) []Observation {
	return runPhases(withProgram(ctx, "code"), c, newCP, codeProgram)
}

// codeProgram is the ProgramFunc of the code kind.
func codeProgram(ctx context.Context, c *Case, fx *Effects, cp runtime.Checkpointer) []Observation {
	doc, diags := spec.Decode(c.File+"#spec", c.Spec)
	if err := diags.Err(); err != nil {
		return Invalid(&runtime.SpecError{Msg: err.Error(), Err: err})
	}
	children, err := buildChildren(c, func(d *spec.Graph, kids []runtime.Child) (runtime.Child, error) {
		b, err := CodeBuilderWith(d, Registry(fx), kids...)
		if err != nil {
			return nil, err
		}
		return b.Compile()
	})
	if err != nil {
		return Invalid(err)
	}
	b, err := CodeBuilderWith(doc, Registry(fx), children...)
	if err != nil {
		return Invalid(err)
	}
	g, err := b.Compile()
	if err != nil {
		return Invalid(err)
	}
	return Drive(ctx, g, c, fx, cp, DecodeValues)
}

// CodeBuilder writes doc as Builder calls, with each node's function from
// reg, as an application defining the same graph in Go would.
func CodeBuilder(doc *spec.Graph, reg runtime.Registry) (*runtime.Builder, error) {
	return CodeBuilderWith(doc, reg)
}

// CodeBuilderWith is CodeBuilder for a document whose "subgraph" nodes
// name children (by Shape().Name): each becomes a Builder.Subgraph call.
func CodeBuilderWith(doc *spec.Graph, reg runtime.Registry, children ...runtime.Child) (*runtime.Builder, error) {
	b := runtime.NewBuilder(doc.Name)
	for _, c := range doc.Channels {
		b.Channel(c.Name, c.Reducer)
	}
	byName := map[string]runtime.Child{}
	for _, ch := range children {
		byName[ch.Shape().Name] = ch
	}
	for _, n := range doc.Nodes {
		if _, own := reg[n.Type]; !own && n.Type == spec.SubgraphType {
			var cfg spec.SubgraphConfig
			if err := runtime.DecodeConfig(n, &cfg); err != nil {
				return nil, &runtime.SpecError{Msg: fmt.Sprintf("node %q: %v", n.ID, err)}
			}
			ch := byName[cfg.Graph]
			if ch == nil {
				return nil, &runtime.SpecError{Msg: fmt.Sprintf("node %q: graph %q is not registered", n.ID, cfg.Graph), Err: runtime.ErrSubgraph}
			}
			var opts []runtime.RunOption
			if cfg.Limit > 0 {
				opts = append(opts, runtime.WithRecursionLimit(cfg.Limit))
			}
			b.Subgraph(n.ID, ch, cfg.In, cfg.Out, opts...)
			continue
		}
		f := reg[n.Type]
		if f == nil {
			return nil, &runtime.SpecError{Msg: fmt.Sprintf("node %q has type %q, which is not in the registry", n.ID, n.Type)}
		}
		fn, err := f(n)
		if err != nil {
			return nil, &runtime.SpecError{Msg: fmt.Sprintf("node %q (type %q): %v", n.ID, n.Type, err)}
		}
		var cfg any
		if len(n.Config) > 0 && string(n.Config) != "null" {
			cfg = json.RawMessage(n.Config)
		}
		b.TypedNode(n.ID, n.Type, cfg, fn)
	}
	for _, e := range doc.Edges {
		if e.When != nil {
			b.EdgeWhen(e.From, e.To, *e.When)
		} else {
			b.Edge(e.From, e.To)
		}
	}
	return b, nil
}
