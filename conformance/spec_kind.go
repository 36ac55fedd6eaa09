package conformance

import (
	"context"
	"encoding/json"
	"io"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// RunSpecKind runs a case through the program kind built from the spec at
// run time (runtime.FromSpec with the test registry), on a fresh thread of
// the checkpointer newCP returns.
func RunSpecKind(ctx context.Context, c *Case, newCP func() runtime.Checkpointer) []Observation {
	return runPhases(withProgram(ctx, "spec"), c, newCP, specProgram)
}

// specProgram is the ProgramFunc of the spec kind.
func specProgram(ctx context.Context, c *Case, fx *Effects, cp runtime.Checkpointer) []Observation {
	doc, diags := spec.Decode(c.File+"#spec", c.Spec)
	if err := diags.Err(); err != nil {
		return Invalid(&runtime.SpecError{Msg: err.Error(), Err: err})
	}
	children, err := buildChildren(c, func(d *spec.Graph, kids []runtime.Child) (runtime.Child, error) {
		return runtime.FromSpec(d, Registry(fx), runtime.WithSubgraphs(kids...))
	})
	if err != nil {
		return Invalid(err)
	}
	g, err := runtime.FromSpec(doc, Registry(fx), runtime.WithSubgraphs(children...))
	if err != nil {
		return Invalid(err)
	}
	return Drive(ctx, g, c, fx, cp, DecodeValues)
}

// runPhases runs every phase of c (Case.Phases) through prog, one program
// per phase, on one thread of the checkpointer newCP returns, with one
// effect counter. A phase whose program is refused ("invalid") ends the
// case.
func runPhases(ctx context.Context, c *Case, newCP func() runtime.Checkpointer, prog ProgramFunc) []Observation {
	cp := newCP()
	defer closeCheckpointer(cp)
	fx := NewEffects()
	var out []Observation
	for p := range c.Phases() {
		obs := prog(ctx, c.AtPhase(p), fx, cp)
		out = append(out, obs...)
		if len(obs) == 1 && obs[0].Status == "invalid" {
			break
		}
	}
	return out
}

// closeCheckpointer closes cp when it holds resources (a database file).
func closeCheckpointer(cp runtime.Checkpointer) {
	if cl, ok := cp.(io.Closer); ok {
		_ = cl.Close()
	}
}

// DecodeValues decodes a case's input into the untyped update.
func DecodeValues(raw json.RawMessage) (runtime.Values, error) {
	var v runtime.Values
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}
