package runtime

import (
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/internal/contract"
)

// graphOf is what every *Graph[S, U] is to the functions init lends genimpl, whose
// S and U are not known where they are declared.
type graphOf interface {
	build(p any, opts []Option) error
	program() any
}

// init lends runtime/genimpl, the support package of generated
// code, what it needs of runtime's internals, so that runtime exports no
// name that only generated code uses.
func init() {
	contract.Linked = &contract.Bridge[*Ctx, Goto, Option]{
		Build: func(g, p any, opts []Option) error {
			gr, ok := g.(graphOf)
			if !ok {
				return &SpecError{Msg: fmt.Sprintf("runtime: %T is not a *runtime.Graph", g)}
			}
			return gr.build(p, opts)
		},
		Program: func(g any) any { return g.(graphOf).program() },
		Command: func(ctx *Ctx) ([]Goto, bool) { return ctx.pendingCommand() },
	}
}
