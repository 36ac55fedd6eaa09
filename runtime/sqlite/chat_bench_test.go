package sqlite_test

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

var (
	chatTurns = flag.Int("chat-turns", 3000, "turns of one BenchmarkChat thread")
	chatKeep  = flag.String("chat-keep", "", "directory where BenchmarkChat leaves its SQLite file, to inspect it")
)

// chatBytes sums the encoded bytes runs hand to the checkpointer.
type chatBytes struct {
	runtime.NopObserver
	n int
}

func (c *chatBytes) CheckpointCommit(_ context.Context, _ runtime.RunRecord, r runtime.CheckpointRecord) {
	c.n += r.Bytes
}

// BenchmarkChat is the chat workload: one thread, one 100-byte message
// appended per turn (a run with the message as input), and every tenth
// turn the assistant node pauses for a person and the turn ends with the
// resume. One op is a whole thread of -chat-turns turns. It reports the
// time per turn, the encoded bytes handed to the checkpointer by the last
// turn, and for SQLite the size of the file after Close (the WAL
// checkpointed into it).
func BenchmarkChat(b *testing.B) {
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
	for _, kind := range []string{"memory", "sqlite"} {
		b.Run(kind, func(b *testing.B) {
			var last, fileBytes int
			for b.Loop() {
				var (
					cp   runtime.Checkpointer = checkpoint.NewMemory()
					path                      = filepath.Join(cmp.Or(*chatKeep, b.TempDir()), "chat.db")
					s    *sqlite.Store
				)
				if kind == "sqlite" {
					os.Remove(path)
					if s, err = sqlite.Open(path); err != nil {
						b.Fatal(err)
					}
					cp = s
				}
				obs := &chatBytes{}
				thread, opts := g.Thread(cp, "chat"), []runtime.RunOption{runtime.WithObserver(obs)}
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
				if s != nil {
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
					fi, err := os.Stat(path)
					if err != nil {
						b.Fatal(err)
					}
					fileBytes = int(fi.Size())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N**chatTurns), "ns/turn")
			b.ReportMetric(float64(last), "bytes/last-turn")
			if kind == "sqlite" {
				b.ReportMetric(float64(fileBytes)/(1<<20), "file-MiB")
			}
		})
	}
}
