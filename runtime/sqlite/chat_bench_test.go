package sqlite_test

import (
	"cmp"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store/storetest"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

var (
	chatTurns = flag.Int("chat-turns", 3000, "turns of one BenchmarkChat thread")
	chatKeep  = flag.String("chat-keep", "", "directory where BenchmarkChat leaves its SQLite file, to inspect it")
)

// BenchmarkChat is the chat workload: one thread, one 100-byte message
// appended per turn (a run with the message as input), and every tenth
// turn the assistant node pauses for a person and the turn ends with the
// resume. One op is a whole thread of -chat-turns turns. It reports the
// time per turn, the encoded bytes handed to the checkpointer by the last
// turn, and for SQLite the size of the file after Close (the WAL
// checkpointed into it).
func BenchmarkChat(b *testing.B) {
	g := storetest.ChatGraph(b)
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
					var err error
					if s, err = sqlite.Open(path); err != nil {
						b.Fatal(err)
					}
					cp = s
				}
				last = storetest.ChatTurns(b, g, cp, *chatTurns)
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
