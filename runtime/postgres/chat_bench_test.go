package postgres_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/spec"
)

var (
	chatTurns = flag.Int("chat-turns", 3000, "turns of one BenchmarkChat thread")
	chatEvery = flag.Int("chat-every", 0, "Compaction.Every of the BenchmarkChat store (0: the default)")
)

// chatBytes sums the encoded bytes runs hand to the checkpointer.
type chatBytes struct {
	runtime.NopObserver
	n int
}

func (c *chatBytes) CheckpointCommit(_ context.Context, _ runtime.RunRecord, r runtime.CheckpointRecord) {
	c.n += r.Bytes
}

// BenchmarkChat is the chat workload of runtime/sqlite's BenchmarkChat on
// PostgreSQL: one thread, one 100-byte message appended per turn, a pause
// for a person every tenth turn. One op is a whole thread of -chat-turns
// turns. It reports the time per turn, the encoded bytes handed to the
// store by the last turn, and the size of the checkpoints table (with its
// indexes and TOAST) at the end.
func BenchmarkChat(b *testing.B) {
	dsn(b)
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
	var last int
	var tableBytes int64
	for b.Loop() {
		s := openStore(b, "chat", postgres.Compact(checkpoint.Compaction{Every: *chatEvery}))
		obs := &chatBytes{}
		thread, opts := g.Thread(s, "chat"), []runtime.RunOption{runtime.WithObserver(obs)}
		for turn := 1; turn <= *chatTurns; turn++ {
			obs.n = 0
			msg := fmt.Sprintf("turn %d %s", turn, strings.Repeat("x", 100))[:100]
			res, err := thread.Invoke(b.Context(), runtime.Values{"messages": msg}, opts...)
			if err == nil && res.Status == runtime.StatusInterrupted {
				res, err = thread.Resume(b.Context(), runtime.Answer(true), opts...)
			}
			if err != nil || res.Status != runtime.StatusDone {
				b.Fatalf("turn %d: %s %v", turn, res.Status, err)
			}
			last = obs.n
		}
		if err := s.Pool().QueryRow(b.Context(), "SELECT pg_total_relation_size($1::regclass)", `"`+s.SchemaName()+`".ilmek_checkpoints`).Scan(&tableBytes); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N**chatTurns), "ns/turn")
	b.ReportMetric(float64(last), "bytes/last-turn")
	b.ReportMetric(float64(tableBytes)/(1<<20), "table-MiB")
}
