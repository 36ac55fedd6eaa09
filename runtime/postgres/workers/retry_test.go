package workers_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

// cutter kills the worker's connections with pg_terminate_backend at
// chosen statements: before one is sent (the statement never runs), or
// after the server committed it and sent its reply, which the client then
// never reads (the client cannot tell whether it ran). A cut after a
// statement of a transaction waits for the commit on the same connection.
type cutter struct {
	admin *pgxpool.Pool // a pool of its own, to terminate from
	mu    sync.Mutex
	match string // a piece of the statement's SQL
	after bool   // cut after the reply arrived, not before the statement
	left  int    // cuts still to make
	made  atomic.Int32
}

func (c *cutter) arm(match string, after bool, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.match, c.after, c.left = match, after, n
}

func (c *cutter) take(sql string) (after, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left == 0 || c.match == "" || !strings.Contains(sql, c.match) {
		return false, false
	}
	c.left--
	return c.after, true
}

// terminate ends the backend pid and waits until it has exited.
func (c *cutter) terminate(pid uint32) {
	if _, err := c.admin.Exec(context.Background(), "SELECT pg_terminate_backend($1, 5000)", int64(pid)); err == nil {
		c.made.Add(1)
	}
}

func (c *cutter) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	cc, _ := conn.PgConn().Conn().(*cutConn)
	if cc == nil {
		return ctx
	}
	if cc.inTx.Load() && data.SQL == "commit" {
		cc.inTx.Store(false)
		cc.arm(func() { c.terminate(conn.PgConn().PID()) })
		return ctx
	}
	after, ok := c.take(data.SQL)
	switch {
	case !ok:
	case !after:
		c.terminate(conn.PgConn().PID())
	case conn.PgConn().TxStatus() == 'T':
		cc.inTx.Store(true) // cut after the commit
	default:
		cc.arm(func() { c.terminate(conn.PgConn().PID()) })
	}
	return ctx
}

func (c *cutter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart cuts a batch (statements sent together, one implicit
// transaction committed at its end) that holds a matching statement:
// before it is sent, or once the reply of its end arrived (it committed).
func (c *cutter) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	cc, _ := conn.PgConn().Conn().(*cutConn)
	if cc == nil || data.Batch == nil {
		return ctx
	}
	for _, q := range data.Batch.QueuedQueries {
		after, ok := c.take(q.SQL)
		switch {
		case !ok:
			continue
		case !after:
			c.terminate(conn.PgConn().PID())
		default:
			cc.armReady(func() { c.terminate(conn.PgConn().PID()) })
		}
		break
	}
	return ctx
}
func (c *cutter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *cutter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// cutConn is a connection that, once armed, passes the server's replies
// through until one holds a CommandComplete message (the statement ran;
// in autocommit or as a commit, it committed), which it drops: it
// terminates the backend and fails the read.
type cutConn struct {
	net.Conn
	cut   atomic.Pointer[func()]
	ready atomic.Bool // cut at a ReadyForQuery (a batch's end), not a CommandComplete
	inTx  atomic.Bool // cut at this transaction's commit
}

func (c *cutConn) arm(fn func()) { c.ready.Store(false); c.cut.Store(&fn) }

// armReady arms the cut for the reply that ends a batch: its
// ReadyForQuery, sent once the batch's implicit transaction committed.
func (c *cutConn) armReady(fn func()) { c.ready.Store(true); c.cut.Store(&fn) }

var errCut = errors.New("the test cut the connection after the server replied")

func (c *cutConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	cut := c.cut.Load()
	want := byte('C')
	if c.ready.Load() {
		want = 'Z'
	}
	if cut == nil || err != nil || !holds(p[:n], want) {
		return n, err
	}
	c.cut.Store(nil)
	(*cut)()
	c.Conn.Close()
	return 0, &net.OpError{Op: "read", Net: "tcp", Err: errCut}
}

// holds reports whether the server messages in b (whole messages, as a
// short reply arrives) include one of type typ (a CommandComplete 'C',
// a ReadyForQuery 'Z').
func holds(b []byte, typ byte) bool {
	for len(b) >= 5 {
		if b[0] == typ {
			return true
		}
		n := int(b[1])<<24 | int(b[2])<<16 | int(b[3])<<8 | int(b[4])
		if n < 4 || 1+n > len(b) {
			return false
		}
		b = b[1+n:]
	}
	return false
}

// openCutQueue opens a queue whose store's pool goes through a cutter.
func openCutQueue(t *testing.T, opts ...postgres.Option) (*workers.Queue, *cutter) {
	t.Helper()
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	c := &cutter{admin: admin}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = c
	var d net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutConn{Conn: conn}, nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return openPoolQueue(t, pool, admin, opts...), c
}

// recordHandler keeps the messages of the records logged through it.
type recordHandler struct {
	mu   sync.Mutex
	msgs []string
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := r.Message
	r.Attrs(func(a slog.Attr) bool { m += " " + a.String(); return true })
	h.msgs = append(h.msgs, m)
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordHandler) count(msg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if strings.HasPrefix(m, msg) {
			n++
		}
	}
	return n
}

// TestQueueStatementsSurviveTerminatedConnections cuts the worker's
// connections with pg_terminate_backend at its claim, its claim renewals
// and its outcome write, before a statement runs and after the server
// committed it but before the worker read the reply. Every request still
// ends done under its first claim (no wait for the claim to expire: the
// claim TTL is a minute where the statement is cut once), each node's
// journaled effect ran exactly once per thread, and each retry was logged
// and reported to OnRetry.
func TestQueueStatementsSurviveTerminatedConnections(t *testing.T) {
	const (
		claimSQL  = "SET state = 'running', worker"
		renewSQL  = "SET claim_until = clock_timestamp() + $3"
		finishSQL = "SET state = $3, result"
		threads   = 4
	)
	for _, tc := range []struct {
		name  string
		match string
		after bool
		cuts  int
		op    string
		ttl   time.Duration
		slow  time.Duration // each node's pause, for renewals to happen
	}{
		{"claim cut before it ran", claimSQL, false, 3, "claim", time.Minute, 0},
		{"claim cut after it committed", claimSQL, true, 3, "claim", time.Minute, 0},
		// The outcome travels with the run's last write, which the store
		// retries (and reports through its own OnRetry, op "commit").
		{"finish cut before it ran", finishSQL, false, 3, "store commit", time.Minute, 0},
		{"finish cut after it committed", finishSQL, true, 3, "store commit", time.Minute, 0},
		{"renew cut before it ran", renewSQL, false, 2, "renew", 1500 * time.Millisecond, 300 * time.Millisecond},
		{"renew cut after it committed", renewSQL, true, 2, "renew", 1500 * time.Millisecond, 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			reported := map[string]int{} // the worker's retries by op, and the store's as "store " + op
			q, c := openCutQueue(t, postgres.OnRetry(func(_ context.Context, r checkpoint.Retry) {
				mu.Lock()
				reported["store "+r.Op]++
				mu.Unlock()
			}))
			var effects sync.Map // thread/node → *atomic.Int32
			b := runtime.NewBuilder("cut").Channel("log", spec.Append)
			prev := spec.Start
			for _, n := range []string{"a", "b", "c"} {
				b.Node(n, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					if _, err := runtime.Step(ctx, "effect", func() (int, error) {
						v, _ := effects.LoadOrStore(ctx.ThreadID()+"/"+n, new(atomic.Int32))
						return int(v.(*atomic.Int32).Add(1)), nil
					}); err != nil {
						return nil, err
					}
					select {
					case <-time.After(tc.slow):
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					return runtime.Values{"log": n}, nil
				})
				b.Edge(prev, n)
				prev = n
			}
			g, err := b.Compile()
			if err != nil {
				t.Fatal(err)
			}
			var h recordHandler
			c.arm(tc.match, tc.after, tc.cuts)
			startWorkers(t, q, map[string]workers.Runnable{"cut": workers.Graph(g)}, 1,
				workers.ClaimTTL(tc.ttl), workers.Concurrency(1), workers.Logger(slog.New(&h)),
				workers.OnRetry(func(_ context.Context, r checkpoint.Retry) {
					mu.Lock()
					reported[r.Op]++
					mu.Unlock()
				}))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ids := make([]int64, threads)
			for i := range ids {
				if ids[i], err = q.Submit(ctx, workers.Request{Graph: "cut", Thread: fmt.Sprintf("t%d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			for i, id := range ids {
				o, err := q.Wait(ctx, id, 50*time.Millisecond)
				if err != nil {
					t.Fatalf("request %d: %v (cuts made %d)", id, err, c.made.Load())
				}
				if o.State != "done" || o.Claims != 1 || logOf(t, o) != "[a b c]" {
					t.Errorf("request %d: state %q, claims %d, log %q, error %q; want done under one claim, log [a b c]", id, o.State, o.Claims, logOf(t, o), o.Error)
				}
				for _, n := range []string{"a", "b", "c"} {
					v, _ := effects.Load(fmt.Sprintf("t%d/%s", i, n))
					if v == nil || v.(*atomic.Int32).Load() != 1 {
						t.Errorf("thread t%d node %s: the effect ran %v times, want once", i, n, v)
					}
				}
			}
			made := int(c.made.Load())
			mu.Lock()
			got := reported[tc.op]
			mu.Unlock()
			// A renewal is retried only until the next one is due (TTL/3):
			// on a loaded machine a retry that is cut again may find its
			// time spent, and gives up with a warning, the next renewal
			// reaching the server in time. Such a give-up accounts for a cut.
			// At least one cut is still retried, so the test fails if
			// renewals stop retrying altogether.
			gaveUp := 0
			if tc.op == "renew" {
				gaveUp = min(h.count("renew a claim"), made-1)
			}
			logged := h.count("retry a queue statement after a transient error")
			if strings.HasPrefix(tc.op, "store ") {
				logged = got // the store logs through slog.Default
			}
			if made != tc.cuts || got+gaveUp < made || logged+gaveUp < made {
				t.Errorf("cuts made %d (want %d); OnRetry reported %v, logged %d retries; want at least one %s retry per cut; log:\n%s",
					made, tc.cuts, reported, logged, tc.op, strings.Join(h.msgs, "\n"))
			}
		})
	}
}
