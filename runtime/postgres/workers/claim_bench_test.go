package workers

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime/postgres"
)

// BenchmarkClaim measures the claim statement alone: b.N requests on
// b.N threads are queued first, then one worker claims them one by one
// (none is run). "plain" has no flow control set; it is the figure that
// must not regress when flow control is off; "limited" claims with a
// graph limit, a limit for each of 8 partitions and a rate limit set,
// none of which holds a request back, so that it times their
// bookkeeping.
func BenchmarkClaim(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchClaim(b, nil) })
	b.Run("limited", func(b *testing.B) {
		benchClaim(b, func(q *Queue) func(int) string {
			ctx := context.Background()
			for _, l := range []Limit{
				{Scope: ScopeGraph, Key: "g", Concurrency: 1 << 30, Rate: 1e9, Burst: 1 << 30},
				{Scope: ScopePartition, Key: AnyPartition, Concurrency: 1 << 30},
			} {
				if err := q.SetLimit(ctx, l); err != nil {
					b.Fatal(err)
				}
			}
			return func(i int) string { return fmt.Sprintf("p%d", i%8) }
		})
	})
}

func benchClaim(b *testing.B, setup func(*Queue) (partition func(int) string)) {
	ctx := context.Background()
	schema := fmt.Sprintf("ilmek_pgtest_claim_%d", os.Getpid())
	s, err := postgres.Open(ctx, pgtest.DSN(b), postgres.Schema(schema))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		s.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		s.Close()
	}()
	q := NewQueue(s)
	part := func(int) string { return "" }
	if setup != nil {
		part = setup(q)
	}
	for i := range b.N {
		if _, err := q.Submit(ctx, benchRequest(i, part(i))); err != nil {
			b.Fatal(err)
		}
	}
	// Statistics, as autovacuum keeps them on a queue in use: without
	// them the planner may sort every queued request for each claim.
	if _, err := s.Pool().Exec(ctx, "ANALYZE "+q.t("ilmek_requests")); err != nil {
		b.Fatal(err)
	}
	w := NewWorker(q, nil)
	b.ResetTimer()
	for range b.N {
		res, err := w.claim(ctx)
		c := res.c
		if err != nil || c == nil {
			b.Fatalf("claim: %v, %v", c, err)
		}
		// End it, as its run would, so that running requests do not
		// pile up in front of the next claim (not timed).
		b.StopTimer()
		if _, err := s.Pool().Exec(ctx, "UPDATE "+q.t("ilmek_requests")+" SET state = 'done' WHERE id = $1", c.id); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

func benchRequest(i int, partition string) Request {
	return Request{Graph: "g", Thread: fmt.Sprintf("t%d", i), Input: []byte(`{}`), Partition: partition}
}
