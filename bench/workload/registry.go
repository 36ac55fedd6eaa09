package workload

import (
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// Registry is the node registry of the spec-built program. Its bodies are
// trivial, as the generated program's are:
//
//   - push appends the number its id ends with to items;
//   - noop writes nothing;
//   - inc sets counter to counter+1 (an unset counter reads as 0);
//   - fan sends counter tasks to worker, the i-th with counter = i;
//   - worker appends its counter to items.
func Registry() runtime.Registry {
	return runtime.Registry{
		"push": func(n spec.Node) (runtime.NodeFunc, error) {
			i, err := Index(n.ID)
			if err != nil {
				return nil, err
			}
			u := runtime.Values{"items": i}
			return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return u, nil }, nil
		},
		"noop": func(spec.Node) (runtime.NodeFunc, error) {
			return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }, nil
		},
		"inc": func(spec.Node) (runtime.NodeFunc, error) {
			return func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
				c, err := number(s["counter"])
				if err != nil {
					return nil, err
				}
				return runtime.Values{"counter": c + 1}, nil
			}, nil
		},
		"fan": func(spec.Node) (runtime.NodeFunc, error) {
			return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
				n, err := number(s["counter"])
				if err != nil {
					return nil, err
				}
				gotos := make([]runtime.Goto, n)
				for i := range gotos {
					gotos[i] = runtime.SendTo("worker", runtime.Values{"counter": i})
				}
				ctx.Command(gotos...)
				return nil, nil
			}, nil
		},
		"worker": func(spec.Node) (runtime.NodeFunc, error) {
			return func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
				return runtime.Values{"items": s["counter"]}, nil
			}, nil
		},
	}
}

// number reads a counter value: nil (unset) is 0; a checkpoint decodes
// numbers as float64.
func number(v any) (int, error) {
	switch n := v.(type) {
	case nil:
		return 0, nil
	case int:
		return n, nil
	case float64:
		return int(n), nil
	}
	return 0, fmt.Errorf("counter holds %T, want a number", v)
}

// ValuesOutcome reads the outcome of a spec-built run from its state.
func ValuesOutcome(supersteps int, s runtime.Values) (Outcome, error) {
	o := Outcome{Supersteps: supersteps}
	items, _ := s["items"].([]any)
	o.Items = make([]int, len(items))
	for i, v := range items {
		n, err := number(v)
		if err != nil {
			return o, fmt.Errorf("items[%d]: %w", i, err)
		}
		o.Items[i] = n
	}
	c, err := number(s["counter"])
	o.Counter = c
	return o, err
}
