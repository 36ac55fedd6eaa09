package contract

// Bridge is what package runtime lends package genimpl: functions over
// runtime's unexported internals, instantiated with runtime's types (C
// *runtime.Ctx, G runtime.Goto, O runtime.Option), so that runtime exports
// nothing only generated code calls. runtime stores a *Bridge in Linked
// from its init; genimpl, which imports runtime and so initialises after
// it, asserts it once.
type Bridge[C, G, O any] struct {
	// Build wraps program p, a Program of g's state and update, in g, a
	// new *runtime.Graph, with the graph's options.
	Build func(g, p any, opts []O) error
	// Program returns the program g (a *runtime.Graph) runs.
	Program func(g any) any
	// Command returns the targets a node recorded with Ctx.Command, and
	// whether it recorded any.
	Command func(ctx C) ([]G, bool)
}

// Linked is the runtime's *Bridge, set by runtime's init.
var Linked any
