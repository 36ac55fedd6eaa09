// Package testgraphs holds small graphs that the tests of several packages
// run, so that each is written once.
package testgraphs

import (
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// Asking returns graph "asking": its node "ask" asks "next?" with
// runtime.Interrupt[string] and appends the answer to channel "log", and
// asks again, under the same interrupt id, until log holds n answers. It is
// the loop where an answer matched by interrupt id alone could answer the
// wrong question.
func Asking(n int) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	return runtime.NewBuilder("asking").Channel("log", spec.Append).
		Node("ask", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			a, err := runtime.Interrupt[string](ctx, "next?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"log": a}, nil
		}).
		Edge(spec.Start, "ask").
		EdgeIf("ask", "ask", func(v runtime.Values) bool { l, _ := v["log"].([]any); return len(l) < n }).
		Compile()
}
