// Package storetest holds the benchmark workloads the SQLite and
// PostgreSQL stores measure alike.
package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
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
	thread, opts := g.Thread(cp, "chat"), []runtime.RunOption{runtime.WithObserver(obs)}
	for turn := 1; turn <= turns; turn++ {
		obs.n = 0
		msg := fmt.Sprintf("turn %d %s", turn, strings.Repeat("x", 100))[:100]
		res, err := thread.Invoke(b.Context(), runtime.Values{"messages": msg}, opts...)
		if err == nil && res.Status == runtime.StatusInterrupted {
			res, err = thread.Resume(b.Context(), runtime.Answer(true), opts...)
		}
		if err != nil || res.Status != runtime.StatusDone {
			b.Fatalf("turn %d: %s %v", turn, res.Status, err)
		}
	}
	return obs.n
}

// OwnerOf and TeamOf are the metadata of thread i of the n threads a
// test of ListByOwner stores (n a multiple of 6): owner alice, bob or
// carol in turn, team t0 or t1 in turn.
func OwnerOf(i int) string { return []string{"alice", "bob", "carol"}[i%3] }

// TeamOf is the team of thread i (see OwnerOf).
func TeamOf(i int) string { return fmt.Sprintf("t%d", i%2) }

// ListByOwner checks listings of the n threads of OwnerOf and TeamOf by
// owner (the key the stores index), alone or with another key, and by
// another key alone: each returns exactly its threads, newest first,
// across pages of size page.
func ListByOwner(t *testing.T, s checkpoint.ThreadLister, n, page int) {
	for _, tc := range []struct {
		name string
		meta map[string]string
		want int
	}{
		{"owner", map[string]string{"owner": "bob"}, n / 3},
		{"owner and team", map[string]string{"owner": "bob", "team": "t0"}, n / 6},
		{"no such owner", map[string]string{"owner": "dave"}, 0},
		{"team only", map[string]string{"team": "t1"}, n / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []checkpoint.ThreadInfo
			q := checkpoint.ThreadQuery{Meta: tc.meta, Limit: page}
			for {
				p, err := s.ListThreads(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, p.Threads...)
				if p.Next == "" {
					break
				}
				q.Cursor = p.Next
			}
			if len(got) != tc.want {
				t.Fatalf("%d threads, want %d", len(got), tc.want)
			}
			for i, th := range got {
				for k, v := range tc.meta {
					if th.Meta[k] != v {
						t.Errorf("thread %s has %s=%q, want %q", th.ID, k, th.Meta[k], v)
					}
				}
				if i > 0 && !got[i-1].Updated.After(th.Updated) {
					t.Errorf("thread %s not older than %s", th.ID, got[i-1].ID)
				}
			}
		})
	}
}

// ListOtherOwner benchmarks listing the threads of an owner who has none
// among 50,000 threads of another: with the store's owner index, without it
// (open drops it: the listing before the index), and on an empty store for
// scale. open returns a store holding threads threads of owner
// "alice".
func ListOtherOwner(b *testing.B, open func(b *testing.B, threads int, dropIndex bool) checkpoint.ThreadLister) {
	for _, tc := range []struct {
		name    string
		threads int
		drop    bool
	}{
		{"indexed", 50000, false},
		{"no-index", 50000, true},
		{"empty", 0, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := open(b, tc.threads, tc.drop)
			q := checkpoint.ThreadQuery{Meta: map[string]string{"owner": "bob"}}
			for b.Loop() {
				page, err := s.ListThreads(b.Context(), q)
				if err != nil || len(page.Threads) != 0 {
					b.Fatal(len(page.Threads), err)
				}
			}
		})
	}
}
