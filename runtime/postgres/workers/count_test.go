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

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// counter counts the round trips through a pool (each query, and each
// batch once: its statements travel together in one implicit
// transaction; BEGIN and COMMIT count), keeping their SQL (a batch's
// statements joined by " ; ").
type counter struct {
	mu      sync.Mutex
	on      bool
	sqls    []string
	batches map[*pgx.Conn]int // the entry of each connection's batch in flight
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
func (c *counter) TraceBatchStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on {
		if c.batches == nil {
			c.batches = map[*pgx.Conn]int{}
		}
		c.batches[conn] = len(c.sqls)
		c.sqls = append(c.sqls, "")
	}
	return ctx
}
func (c *counter) TraceBatchQuery(_ context.Context, conn *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.batches[conn]
	if !c.on || !ok || i >= len(c.sqls) {
		return
	}
	if c.sqls[i] != "" {
		c.sqls[i] += " ; "
	}
	c.sqls[i] += strings.Join(strings.Fields(d.SQL), " ")
}
func (c *counter) TraceBatchEnd(_ context.Context, conn *pgx.Conn, _ pgx.TraceBatchEndData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.batches, conn)
}

// start begins counting; stop ends it and returns what was counted.
func (c *counter) start() { c.mu.Lock(); c.on, c.sqls, c.batches = true, nil, nil; c.mu.Unlock() }
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
// supersteps cost, the rest the request's fixed cost. A statement here is
// a round trip: a batch (statements sent together, one implicit
// transaction) counts once. The queue's own (those on ilmek_requests)
// are at most 4: the submit, the claim (with the base checkpoint's id,
// the thread's lease and the run's id, and in its batch the read of the
// thread's latest checkpoint under that lease, claimread.go), the outcome
// with its notification (in one batch with the run's last events and the
// lease's release), and Wait's read (the worker hands Wait the outcome it
// recorded: no second read); the worker claims nothing more while idle. A
// superstep costs 1 statement (its checkpoint, journals, thread record
// and events in one fenced statement; the last one's carries the run's
// last events and the lease's release, and the outcome rides in its
// transaction); the fixed cost is 3: the queue's submit, claim with the
// run's read and id, and Wait's read (a start request's input checkpoint
// travels with the first superstep's, queuehook.KeepFirst), within issue
// 35's "≤ 5 fixed statements" and as many as a direct run's with the
// event log (its lease, its read, its last events).
// The graph's document is written once per Store and fingerprint (the
// warm-up runs write it). Before these were folded (the item 2),
// a superstep cost 5 statements (BEGIN, the fence, the checkpoint, the
// events, COMMIT; 6 with the thread record) and a request 16 fixed ones
// (21 for 1 superstep, 31 for 3; directly 15 and 25): the lease taken
// and dropped, the document row in every run, the last events in a
// transaction of 4 statements.
func TestRequestStatements(t *testing.T) {
	ctx := context.Background()
	var c counter
	q := tracedQueue(t, &c)
	graphs := map[string]workers.Runnable{}
	direct := map[int]*runtime.Graph[runtime.Values, runtime.Values]{}
	for _, n := range []int{1, 3} {
		g := chain(t, n)
		graphs[fmt.Sprintf("chain%d", n)] = workers.Graph(g)
		direct[n] = g
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
	count("chain1", "warm1") // the documents rows, prepared statements
	count("chain3", "warm3")
	one, q1, sqls1 := count("chain1", "one")
	three, q3, sqls := count("chain3", "three")
	perStep := (three - one) / 2
	fixed := one - perStep
	// The same runs directly (Invoke on a new thread, with the event log
	// the worker's runs keep), for comparison.
	directCount := func(n int, thread string) int {
		c.start()
		if _, err := direct[n].Thread(q.Store(), thread).Invoke(ctx, runtime.Values{}, runtime.WithEventLog()); err != nil {
			t.Fatal(err)
		}
		return len(c.stop())
	}
	d1, d3 := directCount(1, "direct1"), directCount(3, "direct3")
	t.Logf("through the queue: chain1 %d statements, chain3 %d: %d per superstep, %d fixed per request, %d of them the queue's; "+
		"directly: chain1 %d, chain3 %d (%d fixed)", one, three, perStep, fixed, q3, d1, d3, d1-(d3-d1)/2)
	if testing.Verbose() {
		for _, s := range sqls {
			t.Log("  ", s[:min(len(s), 120)])
		}
	}
	if (three-one)%2 != 0 || perStep > 1 {
		t.Errorf("a superstep costs %d statements (chain1 %d, chain3 %d), want 1 (its commit):\n%s", perStep, one, three, strings.Join(sqls, "\n"))
	}
	if fixed > 3 {
		t.Errorf("a request's fixed cost is %d statements, want at most 3 (submit, the claim with the run's read and id, Wait's read; the outcome rides with the last checkpoint):\n%s", fixed, strings.Join(sqls1, "\n"))
	}
	if q1 > 4 || q3 > 4 {
		t.Errorf("the queue's statements per request: %d (chain1), %d (chain3), want at most 4; chain1's:\n%s", q1, q3, strings.Join(sqls1, "\n"))
	}
	// Flow control adds none: under a graph limit of concurrency and
	// rate, the claim takes its slot and token, the outcome gives the slot
	// back, in the same statements.
	if err := q.SetLimit(ctx, workers.Limit{Scope: workers.ScopeGraph, Key: "chain1", Concurrency: 10, Rate: 1000, Burst: 10}); err != nil {
		t.Fatal(err)
	}
	if _, ql, sqls := count("chain1", "limited"); ql > 4 {
		t.Errorf("the queue's statements per request under a limit: %d, want at most 4:\n%s", ql, strings.Join(sqls, "\n"))
	}
}
