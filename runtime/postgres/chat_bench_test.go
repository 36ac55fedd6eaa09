package postgres_test

import (
	"flag"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store/storetest"
	"github.com/ilmek-go/ilmek/runtime/postgres"
)

var (
	chatTurns = flag.Int("chat-turns", 3000, "turns of one BenchmarkChat thread")
	chatEvery = flag.Int("chat-every", 0, "Compaction.Every of the BenchmarkChat store (0: the default)")
)

// BenchmarkChat is the chat workload of runtime/sqlite's BenchmarkChat on
// PostgreSQL: one thread, one 100-byte message appended per turn, a pause
// for a person every tenth turn. One op is a whole thread of -chat-turns
// turns. It reports the time per turn, the encoded bytes handed to the
// store by the last turn, and the size of the checkpoints table (with its
// indexes and TOAST) at the end.
func BenchmarkChat(b *testing.B) {
	dsn(b)
	g := storetest.ChatGraph(b)
	var last int
	var tableBytes int64
	for b.Loop() {
		s := openStore(b, "chat", postgres.Compact(checkpoint.Compaction{Every: *chatEvery}))
		last = storetest.ChatTurns(b, g, s, *chatTurns)
		if err := s.Pool().QueryRow(b.Context(), "SELECT pg_total_relation_size($1::regclass)", `"`+s.SchemaName()+`".ilmek_checkpoints`).Scan(&tableBytes); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N**chatTurns), "ns/turn")
	b.ReportMetric(float64(last), "bytes/last-turn")
	b.ReportMetric(float64(tableBytes)/(1<<20), "table-MiB")
}
