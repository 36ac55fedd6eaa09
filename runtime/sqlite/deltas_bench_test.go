package sqlite_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

var longThread = flag.Int("long-thread", 100_000, "checkpoints of BenchmarkGetLatestLongThread's thread")

// BenchmarkGetLatestLongThread reads the newest checkpoint of a thread of
// -long-thread supersteps written as deltas with the default compaction:
// "set" supersteps each set a 100-byte last_write channel and a counter (the
// state stays small, so the read should not depend on the thread's
// length); "append" supersteps each append a 100-byte message (the state,
// and so the read, grows with the thread).
func BenchmarkGetLatestLongThread(b *testing.B) {
	for _, kind := range []string{"set", "append"} {
		b.Run(kind, func(b *testing.B) { benchLongThread(b, kind) })
	}
}

func benchLongThread(b *testing.B, kind string) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "long.db"), sqlite.Synchronous("NORMAL"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	first := &runtime.Checkpoint{ID: "c000000", ThreadID: "t", PlanID: "c000000", Channels: json.RawMessage(`{"counter":0,"last":"","messages":["hello"]}`), Created: time.Now()}
	if err := s.Put(ctx, first, nil); err != nil {
		b.Fatal(err)
	}
	msg, _ := json.Marshal(fmt.Sprintf("%0100d", 7))
	prev := first.ID
	for i := 1; i < *longThread; i++ {
		id := fmt.Sprintf("c%06d", i)
		c := &runtime.Checkpoint{ID: id, ParentID: prev, ThreadID: "t", PlanID: id, Step: i, Created: time.Now()}
		d := checkpoint.Delta{Base: prev, Writes: []checkpoint.ChannelWrite{{Channel: "messages", Append: true, Value: json.RawMessage("[" + string(msg) + "]")}}}
		if kind == "set" {
			d.Writes = []checkpoint.ChannelWrite{{Channel: "counter", Value: json.RawMessage(fmt.Sprint(i))}, {Channel: "last", Value: msg}}
		}
		if err := s.PutDelta(ctx, c, d, nil); err != nil {
			b.Fatal(err)
		}
		prev = id
	}
	var size int
	for b.Loop() {
		c, err := s.Get(ctx, "t", "")
		if err != nil || c.ID != prev {
			b.Fatalf("latest: %v", err)
		}
		size = len(c.Channels)
	}
	b.ReportMetric(float64(size), "state-bytes")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/read")
}
