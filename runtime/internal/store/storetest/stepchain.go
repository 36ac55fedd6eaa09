package storetest

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// StepChain is a chain of n nodes appending their names (n0, n1, ...) to
// channel "log", for the durability tests of both stores. Node i runs a
// journaled Step, which adds 1 to effects, when steps(i) (steps nil: no
// node does), then after(ctx, i) when the Step returned (after nil:
// nothing), and last fail(i) (fail nil: nothing), whose error fails the
// node.
func StepChain(t testing.TB, n int, steps func(int) bool, effects *atomic.Int64, after func(*runtime.Ctx, int) error, fail func(int) error, opts ...runtime.Option) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	b := runtime.NewBuilder("durable").Channel("log", spec.Append)
	prev := spec.Start
	for i := range n {
		name := fmt.Sprintf("n%d", i)
		b.Node(name, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if steps != nil && steps(i) {
				if _, err := runtime.Step(ctx, "effect", func() (int64, error) { return effects.Add(1), nil }); err != nil {
					return nil, err
				}
				if after != nil {
					if err := after(ctx, i); err != nil {
						return nil, err
					}
				}
			}
			if fail != nil {
				if err := fail(i); err != nil {
					return nil, err
				}
			}
			return runtime.Values{"log": name}, nil
		})
		b.Edge(prev, name)
		prev = name
	}
	g, err := b.Edge(prev, spec.End).Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// CheckLog fails t unless the thread's "log" channel holds the names of
// a StepChain's n nodes once each, in order.
func CheckLog(t testing.TB, th *runtime.Thread[runtime.Values, runtime.Values], n int) {
	t.Helper()
	st, err := th.State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("n%d", i)
	}
	if got, w := fmt.Sprint(st.State["log"]), "["+strings.Join(want, " ")+"]"; got != w {
		t.Errorf("the thread's log %s, want %s", got, w)
	}
}
