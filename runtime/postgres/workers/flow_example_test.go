package workers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// Flow control for a multi-tenant service: the checkout graph runs at
// most 8 requests at once and starts at most 50 a second across every
// worker process, each tenant runs at most 2 at once, and a tenant's
// urgent request goes first. Ended requests are kept a week. (Not run by
// go test: it needs a server; TestConcurrencyLimitsHoldAcrossWorkers and
// TestRateLimitHoldsAcrossWorkers do the same against
// ILMEK_POSTGRES_DSN.)
func ExampleQueue_SetLimit() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, os.Getenv("ILMEK_POSTGRES_DSN"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	q := workers.NewQueue(store)
	for _, l := range []workers.Limit{
		{Scope: workers.ScopeGraph, Key: "checkout", Concurrency: 8, Rate: 50, Burst: 10},
		{Scope: workers.ScopePartition, Key: workers.AnyPartition, Concurrency: 2},
	} {
		if err := q.SetLimit(ctx, l); err != nil {
			fmt.Println(err)
			return
		}
	}
	if _, err := q.Submit(ctx, workers.Request{Graph: "checkout", Thread: "order-42", Partition: "acme", Priority: 10,
		Input: json.RawMessage(`{"cart": "c-9"}`)}); err != nil {
		fmt.Println(err)
		return
	}
	w := workers.NewWorker(q, map[string]workers.Runnable{ /* "checkout": workers.Graph(g) */ },
		workers.Retention(7*24*time.Hour, time.Hour),
		workers.Logger(slog.Default()),
		workers.OnEvent(func(_ context.Context, e workers.Event) {
			if e.Kind == workers.EventDead {
				fmt.Println("dead:", e.Request, e.Error)
			}
		}))
	_ = w.Run(ctx)
}
