package workers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// counter counts the statements sent through a pool (each query, each
// statement of a batch, BEGIN and COMMIT included), keeping their SQL.
type counter struct {
	mu   sync.Mutex
	on   bool
	sqls []string
}

func (c *counter) add(sql string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on {
		c.sqls = append(c.sqls, strings.Join(strings.Fields(sql), " "))
	}
}

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.add(d.SQL)
	return ctx
}
func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *counter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (c *counter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.add(d.SQL)
}
func (c *counter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// start begins counting; stop ends it and returns what was counted.
func (c *counter) start() { c.mu.Lock(); c.on, c.sqls = true, nil; c.mu.Unlock() }
func (c *counter) stop() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on = false
	return c.sqls
}

// TestRequestStatements counts, with a pgx tracer on the store's pool,
// the statements one request costs end to end (Submit, the worker's
// claim and outcome, the run, Wait) on a 1- and a 3-superstep chain, one
// request at a time with an idle worker: the difference is what the
// supersteps cost, the rest the request's fixed cost. The queue's own
// statements (those on ilmek_requests) are at most 6: the submit, the
// claim (with the base checkpoint read), the run's id, the outcome with
// its notification, and Wait's two reads (before and after the end
// notification); the worker claims nothing more while idle. Before this
// rewrite they were 17 (the submit 6, the claim 1, its base 1, the run's
// id 1, the outcome 4, two empty claims after the end, Wait 2), besides a
// read of the base checkpoint of its own: 43 statements for 3 supersteps
// where there are 31 now.
func TestRequestStatements(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	var c counter
	cfg.ConnConfig.Tracer = &c
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	q := openPoolQueue(t, pool, pool)
	graphs := map[string]workers.Runnable{}
	for _, n := range []int{1, 3} {
		g := chain(t, n)
		graphs[fmt.Sprintf("chain%d", n)] = workers.Graph(g)
	}
	startWorkers(t, q, graphs, 1, workers.Concurrency(1), workers.Poll(time.Hour))
	count := func(graph, thread string) (all, queue int, sqls []string) {
		time.Sleep(200 * time.Millisecond) // the worker is idle, its listener listening
		c.start()
		id, err := q.Submit(ctx, workers.Request{Graph: graph, Thread: thread, Input: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if o, err := q.Wait(ctx, id, time.Hour); err != nil || o.State != "done" {
			t.Fatalf("request %d: %v %+v", id, err, o)
		}
		time.Sleep(200 * time.Millisecond) // anything the end set off
		sqls = c.stop()
		for _, s := range sqls {
			if strings.Contains(s, "ilmek_requests") {
				queue++
			}
		}
		return len(sqls), queue, sqls
	}
	count("chain1", "warm") // the documents row, prepared statements
	one, q1, sqls1 := count("chain1", "one")
	three, q3, sqls := count("chain3", "three")
	perStep := (three - one) / 2
	fixed := one - perStep
	t.Logf("chain1 %d statements, chain3 %d: %d per superstep, %d fixed per request, %d of them the queue's", one, three, perStep, fixed, q3)
	if testing.Verbose() {
		for _, s := range sqls {
			t.Log("  ", s[:min(len(s), 120)])
		}
	}
	if q1 > 6 || q3 > 6 {
		t.Errorf("the queue's statements per request: %d (chain1), %d (chain3), want at most 6; chain1's:\n%s", q1, q3, strings.Join(sqls1, "\n"))
	}
	// Flow control adds none: under a graph limit of concurrency and
	// rate, the claim takes its slot and token, the outcome gives the slot
	// back, in the same statements.
	if err := q.SetLimit(ctx, workers.Limit{Scope: workers.ScopeGraph, Key: "chain1", Concurrency: 10, Rate: 1000, Burst: 10}); err != nil {
		t.Fatal(err)
	}
	if _, ql, sqls := count("chain1", "limited"); ql > 6 {
		t.Errorf("the queue's statements per request under a limit: %d, want at most 6:\n%s", ql, strings.Join(sqls, "\n"))
	}
}
