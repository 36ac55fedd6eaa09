package waker_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/runtime/waker"
)

// BenchmarkParkAndWake parks b.N threads on a 200 ms timer and wakes them
// with one WakeDue pass; it reports timers parked and woken per second
// (the wait itself not counted), and the parks and the wakes per second
// of each phase.
func BenchmarkParkAndWake(b *testing.B) {
	for _, c := range []struct {
		name  string
		store func(b *testing.B) waker.Store
	}{
		{"memory", func(*testing.B) waker.Store { return checkpoint.NewMemory() }},
		{"sqlite", func(b *testing.B) waker.Store {
			s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			store := c.store(b)
			g, err := buildSleeper(200*time.Millisecond, func() (int, error) { return 1, nil })
			if err != nil {
				b.Fatal(err)
			}
			w, err := waker.New(store, []waker.Target{waker.Graph(g)}, waker.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ResetTimer()
			t0 := time.Now()
			for i := range b.N {
				res, err := g.Thread(store, "t"+strconv.Itoa(i)).Invoke(ctx, nil, runtime.WithParkAfter(0))
				if err != nil || res.Status != runtime.StatusParked {
					b.Fatalf("%s %v", res.Status, err)
				}
			}
			parking := time.Since(t0)
			b.StopTimer()
			time.Sleep(200 * time.Millisecond)
			b.StartTimer()
			t1 := time.Now()
			n, err := w.WakeDue(ctx)
			waking := time.Since(t1)
			if err != nil || n != b.N {
				b.Fatalf("woke %d of %d: %v", n, b.N, err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "timers/s")
			b.ReportMetric(float64(b.N)/parking.Seconds(), "parks/s")
			b.ReportMetric(float64(b.N)/waking.Seconds(), "wakes/s")
		})
	}
}
