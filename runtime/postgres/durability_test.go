package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store/storetest"
	"github.com/ilmek-go/ilmek/runtime/postgres"
)

// writeCounter counts a pool's round trips that write a run's
// checkpoints or journals: one-statement commits and journal writes sent
// alone, and batches.
type writeCounter struct {
	mu      sync.Mutex
	on      bool
	writes  int
	batches int
	failed  int // batches that failed: a statement of theirs wrote nothing
	alone   int // journal writes in a statement of their own
}

func (c *writeCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	cps, journals := strings.Contains(d.SQL, "ilmek_checkpoints ("), strings.Contains(d.SQL, "ilmek_journals (")
	if c.on && (cps || journals) {
		c.writes++
	}
	if c.on && journals && !cps {
		c.alone++
	}
	return ctx
}
func (c *writeCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *writeCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on {
		c.batches++
	}
	return ctx
}
func (c *writeCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *writeCounter) TraceBatchEnd(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchEndData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on && d.Err != nil {
		c.failed++
	}
}

// roundTrips starts counting and returns a function that stops and
// returns the write round trips counted: a batch is one, whatever its
// statements.
func (c *writeCounter) roundTrips() func() int {
	c.mu.Lock()
	c.on, c.writes, c.batches, c.failed, c.alone = true, 0, 0, 0, 0
	c.mu.Unlock()
	return func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.on = false
		// pgx traces a batch's statements with TraceBatchQuery.
		return c.writes + c.batches
	}
}

// durableStore opens a Store in a fresh schema on a pool traced by tr, and
// returns the schema's name for the test's own statements.
func durableStore(t *testing.T, tr pgx.QueryTracer, opts ...postgres.Option) (*postgres.Store, string, *pgxpool.Pool) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 6
	cfg.ConnConfig.Tracer = tr
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	schema := newSchema(t, "durable")
	s, err := postgres.OpenPool(context.Background(), p, append([]postgres.Option{postgres.Schema(schema)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, schema, p
}

// stepsEvery3 runs a Step in nodes n1, n4, n7, ...
func stepsEvery3(i int) bool { return i%3 == 1 }

// nextWriteChain is storetest.StepChain with a Step in every third node,
// recording in seen[i] how many checkpoints the thread has in s when
// node i's Step returned.
func nextWriteChain(t *testing.T, s *postgres.Store, n int, effects *atomic.Int64, seen []int, fail func(int) error) *runtime.Graph[runtime.Values, runtime.Values] {
	return storetest.StepChain(t, n, stepsEvery3, effects, func(ctx *runtime.Ctx, i int) error {
		cps, err := s.List(ctx, ctx.ThreadID(), 0)
		seen[i] = len(cps)
		return err
	}, fail)
}

// TestDurableWithNextWrite: on PostgreSQL a run with DurableWithNextWrite
// sends a kept checkpoint with its next write in one round trip (a batch),
// a Step's journal with the checkpoint its task was planned at, and ends
// with what a run durable at every superstep stores. A compaction inside
// a batch (the one-statement delta writes nothing at the limits) is
// written by the batch's transaction instead.
func TestDurableWithNextWrite(t *testing.T) {
	const n = 9
	for _, tc := range []struct {
		name       string
		d          runtime.Durability
		compact    int // Compaction.Every; 0: the default
		roundTrips int // write round trips of the run
		alone      int // journal writes in a statement of their own
	}{
		// the first checkpoint, 9 supersteps, 3 journals
		{"each superstep", runtime.DurableEachSuperstep, 0, 1 + n + 3, 3},
		// start+n0 | n1's journal, nothing kept | n1+n2 | n4's journal in
		// n3's statement | n4+n5 | n7's journal in n6's | n7+n8
		{"with next write", runtime.DurableWithNextWrite, 0, 7, 1},
		{"with next write, compacting every 2", runtime.DurableWithNextWrite, 2, 7, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c writeCounter
			var opts []postgres.Option
			if tc.compact > 0 {
				opts = append(opts, postgres.Compact(checkpoint.Compaction{Every: tc.compact}))
			}
			s, _, _ := durableStore(t, &c, opts...)
			var effects atomic.Int64
			seen := make([]int, n)
			g := nextWriteChain(t, s, n, &effects, seen, nil)
			stop := c.roundTrips()
			res, err := g.Thread(s, "t").Invoke(t.Context(), nil, runtime.WithDurability(tc.d))
			got := stop()
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("run: %v %v", res.Status, err)
			}
			if tc.compact == 0 && got != tc.roundTrips {
				t.Errorf("%d write round trips, want %d", got, tc.roundTrips)
			}
			if tc.compact == 0 && c.alone != tc.alone {
				t.Errorf("%d journal writes in a statement of their own, want %d: a kept checkpoint's statement carries the journal", c.alone, tc.alone)
			}
			if compacted := c.failed > 0; compacted != (tc.compact > 0) {
				t.Errorf("%d batches wrote nothing and went through a transaction; want some only when compacting", c.failed)
			}
			for i := 1; i < n; i += 3 {
				if seen[i] != i+1 {
					t.Errorf("node n%d: %d checkpoints stored when its Step returned, want %d", i, seen[i], i+1)
				}
			}
			if effects.Load() != 3 {
				t.Errorf("%d effects, want 3", effects.Load())
			}
			cps, err := s.List(t.Context(), "t", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(cps) != n+1 || cps[0].ID != res.CheckpointID {
				t.Fatalf("%d checkpoints, latest %s; want %d, latest %s", len(cps), cps[0].ID, n+1, res.CheckpointID)
			}
			storetest.CheckLog(t, g.Thread(s, "t"), n)
		})
	}
}

// TestDurableWithNextWriteFailures: a kept checkpoint is written before a
// failed run ends, and a retry repeats no Step; when the lease was taken
// over under a kept checkpoint, the run fails with ErrLeaseLost and its
// result names the checkpoint the thread does have.
func TestDurableWithNextWriteFailures(t *testing.T) {
	errNode := errors.New("node failed")
	for _, tc := range []struct {
		name string
		at   int
		lose bool
	}{
		// n2 runs while superstep 2's checkpoint is kept.
		{"a node fails under a kept checkpoint", 2, false},
		{"the lease is taken over under a kept checkpoint", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, schema, p := durableStore(t, nil)
			var effects atomic.Int64
			failed := false
			fail := func(i int) error {
				if i != tc.at || failed {
					return nil
				}
				failed = true
				if tc.lose {
					if _, err := p.Exec(context.Background(), "UPDATE "+schema+".ilmek_leases SET epoch = epoch + 1"); err != nil {
						return err
					}
				}
				return errNode
			}
			g := nextWriteChain(t, s, 6, &effects, make([]int, 6), fail)
			th := g.Thread(s, "t")
			opt := runtime.WithDurability(runtime.DurableWithNextWrite)
			res, err := th.Invoke(t.Context(), nil, opt)
			if res.Status != runtime.StatusError || !errors.Is(err, errNode) || tc.lose != errors.Is(err, postgres.ErrLeaseLost) {
				t.Fatalf("run: %v %v; want an error wrapping the node's, and ErrLeaseLost %v", res.Status, err, tc.lose)
			}
			cps, err := s.List(t.Context(), "t", 0)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.at + 1
			if tc.lose {
				want = tc.at
			}
			if len(cps) != want || cps[0].ID != res.CheckpointID {
				t.Fatalf("%d checkpoints, latest %s; want %d, the result's %s", len(cps), cps[0].ID, want, res.CheckpointID)
			}
			if tc.lose {
				if _, err := p.Exec(context.Background(), "DELETE FROM "+schema+".ilmek_leases"); err != nil {
					t.Fatal(err)
				}
			}
			res, err = th.Invoke(t.Context(), nil, opt)
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("retry: %v %v", res.Status, err)
			}
			storetest.CheckLog(t, th, 6)
			if got := effects.Load(); got != 2 {
				t.Errorf("%d effects, want 2", got)
			}
		})
	}
}

// batchCutter cuts the connection of the next batch a run sends: before
// the server gets it, or after the server's reply that the batch's
// implicit transaction committed (its ReadyForQuery), which the client
// then never reads.
type batchCutter struct {
	admin *pgxpool.Pool
	after bool
	left  atomic.Int32
	made  atomic.Int32
}

func (c *batchCutter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (c *batchCutter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *batchCutter) TraceBatchStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	if c.left.Add(-1) < 0 {
		return ctx
	}
	pid := conn.PgConn().PID()
	cut := func() {
		if _, err := c.admin.Exec(context.Background(), "SELECT pg_terminate_backend($1, 5000)", int64(pid)); err == nil {
			c.made.Add(1)
		}
	}
	if !c.after {
		cut()
		return ctx
	}
	conn.PgConn().Conn().(*readyCut).arm(cut)
	return ctx
}
func (c *batchCutter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *batchCutter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// readyCut is a connection that, once armed, drops the first read that
// holds a ReadyForQuery message, terminating the backend first.
type readyCut struct {
	net.Conn
	cut atomic.Pointer[func()]
}

func (c *readyCut) arm(fn func()) { c.cut.Store(&fn) }

func (c *readyCut) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	cut := c.cut.Load()
	if cut == nil || err != nil || !holdsReady(p[:n]) {
		return n, err
	}
	c.cut.Store(nil)
	(*cut)()
	c.Conn.Close()
	return 0, &net.OpError{Op: "read", Net: "tcp", Err: errors.New("the test cut the connection after the batch committed")}
}

// holdsReady reports whether b ends with a ReadyForQuery message ('Z',
// length 5, a transaction status): the last message of a reply, so the
// end of the read that holds it, wherever the read began.
func holdsReady(b []byte) bool {
	n := len(b)
	return n >= 6 && b[n-6] == 'Z' && b[n-5] == 0 && b[n-4] == 0 && b[n-3] == 0 && b[n-2] == 5
}

// TestDurableWithNextWriteBatchCut: a batch whose connection is cut,
// before the server ran it or after its transaction committed, is written
// exactly once: the retry sends it again only when its first checkpoint
// is not stored. The run ends done with every superstep stored once and
// no Step repeated.
func TestDurableWithNextWriteBatchCut(t *testing.T) {
	for _, after := range []bool{false, true} {
		t.Run(fmt.Sprintf("after commit %v", after), func(t *testing.T) {
			ctx := context.Background()
			admin := sharedPool(t)
			c := &batchCutter{admin: admin, after: after}
			cfg, err := pgxpool.ParseConfig(dsn(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg.MaxConns = 4
			cfg.ConnConfig.Tracer = c
			var d net.Dialer
			cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
				conn, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &readyCut{Conn: conn}, nil
			}
			p, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			var retried atomic.Int32
			s, err := postgres.OpenPool(ctx, p, postgres.Schema(newSchema(t, "cut")),
				postgres.OnRetry(func(context.Context, checkpoint.Retry) { retried.Add(1) }))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			const n = 9
			var effects atomic.Int64
			g := nextWriteChain(t, s, n, &effects, make([]int, n), nil)
			c.left.Store(3) // the first three batches
			res, err := g.Thread(s, "t").Invoke(ctx, nil, runtime.WithDurability(runtime.DurableWithNextWrite))
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("run: %v %v", res.Status, err)
			}
			if c.made.Load() != 3 || retried.Load() < 3 {
				t.Errorf("%d cuts made, %d retries; want 3 cuts, each retried", c.made.Load(), retried.Load())
			}
			cps, err := s.List(ctx, "t", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(cps) != n+1 || cps[0].ID != res.CheckpointID {
				t.Fatalf("%d checkpoints, latest %s; want %d, latest %s", len(cps), cps[0].ID, n+1, res.CheckpointID)
			}
			storetest.CheckLog(t, g.Thread(s, "t"), n)
			if effects.Load() != 3 {
				t.Errorf("%d effects, want 3", effects.Load())
			}
		})
	}
}
