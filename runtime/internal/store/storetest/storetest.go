// Package storetest holds the benchmark workloads the SQLite and
// PostgreSQL stores measure alike.
package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// Chain is a chain of n nodes, each writing channel "n" (and, with trail,
// appending its id to "trail"): a run is n durable supersteps.
func Chain(b testing.TB, name string, n int, trail bool) *runtime.Graph[runtime.Values, runtime.Values] {
	bld := runtime.NewBuilder(name).Channel("n", "").Channel("trail", spec.Append)
	prev := spec.Start
	for i := range n {
		id := fmt.Sprintf("n%d", i)
		bld.Node(id, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			if trail {
				return runtime.Values{"n": i, "trail": id}, nil
			}
			return runtime.Values{"n": i}, nil
		})
		bld.Edge(prev, id)
		prev = id
	}
	g, err := bld.Compile()
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// chatBytes sums the encoded bytes runs hand to the checkpointer.
type chatBytes struct {
	runtime.NopObserver
	n int
}

func (c *chatBytes) CheckpointCommit(_ context.Context, _ runtime.RunRecord, r runtime.CheckpointRecord) {
	c.n += r.Bytes
}

// ChatGraph is the chat workload's graph: one 100-byte message appended
// per turn (a run with the message as input), and every tenth turn the
// assistant node pauses for a person and the turn ends with the resume.
func ChatGraph(b testing.TB) *runtime.Graph[runtime.Values, runtime.Values] {
	g, err := runtime.NewBuilder("chat").Channel("messages", spec.Append).Channel("turns", "").
		Node("assistant", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			l, _ := s["messages"].([]any)
			if len(l)%10 == 0 {
				if _, err := runtime.Interrupt[bool](ctx, "go on?"); err != nil {
					return nil, err
				}
			}
			return runtime.Values{"turns": len(l)}, nil
		}).
		Edge(spec.Start, "assistant").Edge("assistant", spec.End).Compile()
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// ChatTurns runs turns turns of g (ChatGraph) on thread "chat" of cp and
// returns the encoded bytes handed to cp by the last turn.
func ChatTurns(b *testing.B, g *runtime.Graph[runtime.Values, runtime.Values], cp runtime.Checkpointer, turns int) int {
	obs := &chatBytes{}
	opts := []runtime.RunOption{runtime.Thread("chat"), runtime.WithCheckpointer(cp), runtime.WithObserver(obs)}
	for turn := 1; turn <= turns; turn++ {
		obs.n = 0
		msg := fmt.Sprintf("turn %d %s", turn, strings.Repeat("x", 100))[:100]
		res, err := g.Invoke(b.Context(), runtime.Values{"messages": msg}, opts...)
		if err == nil && res.Status == runtime.StatusInterrupted {
			res, err = g.Resume(b.Context(), runtime.Answer(true), opts...)
		}
		if err != nil || res.Status != runtime.StatusDone {
			b.Fatalf("turn %d: %s %v", turn, res.Status, err)
		}
	}
	return obs.n
}
