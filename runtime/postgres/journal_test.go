package postgres_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/spec"
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

func (c *counter) start() { c.mu.Lock(); c.on, c.sqls = true, nil; c.mu.Unlock() }
func (c *counter) stop() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on = false
	return c.sqls
}

// tracedStore opens a Store in a fresh schema on a pool of its own whose
// statements tr sees.
func tracedStore(t *testing.T, tr pgx.QueryTracer, conns int32) *postgres.Store {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = conns
	cfg.ConnConfig.Tracer = tr
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	s, err := postgres.OpenPool(context.Background(), p, postgres.Schema(newSchema(t, "stmts")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// stepChain is a chain of n Builder nodes, each writing channel "n"; with
// step, each node first runs a runtime.Step.
func stepChain(t *testing.T, n int, step bool) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	b := runtime.NewBuilder("chain").Channel("n", spec.LastWrite)
	prev := spec.Start
	for i := range n {
		id := "n" + strconv.Itoa(i)
		b.Node(id, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			v := i + 1
			if step {
				var err error
				if v, err = runtime.Step(ctx, "effect", func() (int, error) { return i + 1, nil }); err != nil {
					return nil, err
				}
			}
			return runtime.Values{"n": v}, nil
		})
		b.Edge(prev, id)
		prev = id
	}
	g, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestStepStatements counts, with a pgx tracer on the store's pool, the
// statements a run of a 3-node chain sends with and without a Step in
// each node: a Step costs exactly one statement, its fenced journal write
// (no read of the journal, no separate fence check, no BEGIN/COMMIT), and
// the superstep's commit stays one statement with the journal's drop in it.
func TestStepStatements(t *testing.T) {
	const n = 3
	var c counter
	s := tracedStore(t, &c, 4)
	ctx := context.Background()
	count := func(step bool) []string {
		g := stepChain(t, n, step)
		// A first run writes the graph's document row, once per process.
		if _, err := g.Thread(s, "warm-"+strconv.FormatBool(step)).Invoke(ctx, runtime.Values{}, runtime.WithRecursionLimit(n+1)); err != nil {
			t.Fatal(err)
		}
		th := g.Thread(s, "t-"+strconv.FormatBool(step))
		c.start()
		res, err := th.Invoke(ctx, runtime.Values{}, runtime.WithRecursionLimit(n+1))
		sqls := c.stop()
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != runtime.StatusDone {
			t.Fatalf("run ended %s, want done", res.Status)
		}
		return sqls
	}
	without, with := count(false), count(true)
	journal := 0
	for _, q := range with {
		if strings.Contains(q, "ilmek_journals (") {
			journal++
		}
	}
	if got := len(with) - len(without); got != n || journal != n {
		t.Errorf("%d Steps cost %d statements more (%d journal writes), want %d (one fenced journal write each)\nwithout:\n  %s\nwith:\n  %s",
			n, got, journal, n, strings.Join(without, "\n  "), strings.Join(with, "\n  "))
	}
	t.Logf("%d statements without a Step, %d with one in each of %d nodes", len(without), len(with), n)
}

// gate is a tracer that holds each journal write at its start until want
// of them have started (or a second has passed), and records how many
// were in flight at once at most.
type gate struct {
	want     int
	mu       sync.Mutex
	started  int
	inFlight int
	most     int
	all      chan struct{}
}

type gateKey struct{}

func (g *gate) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if !strings.Contains(d.SQL, "INSERT INTO") || !strings.Contains(d.SQL, "ilmek_journals (") {
		return ctx
	}
	g.mu.Lock()
	g.started++
	g.inFlight++
	g.most = max(g.most, g.inFlight)
	if g.started == g.want {
		close(g.all)
	}
	g.mu.Unlock()
	select {
	case <-g.all:
	case <-time.After(time.Second):
	}
	return context.WithValue(ctx, gateKey{}, true)
}

func (g *gate) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if ctx.Value(gateKey{}) != nil {
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}
}

// TestStepJournalWritesOverlap runs a superstep of three parallel tasks,
// each with a Step, on a store whose tracer holds every journal write at
// its start until all three have started: the three are in flight at once
// (the store serializes nothing around them; the pool serves them on
// three connections), and the run still ends done with each step's value.
func TestStepJournalWritesOverlap(t *testing.T) {
	const n = 3
	g := &gate{want: n, all: make(chan struct{})}
	s := tracedStore(t, g, n+1)
	b := runtime.NewBuilder("fan")
	for i := range n {
		id := "n" + strconv.Itoa(i)
		b.Channel(id, spec.LastWrite)
		b.Node(id, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			v, err := runtime.Step(ctx, "effect", func() (int, error) { return i + 10, nil })
			if err != nil {
				return nil, err
			}
			return runtime.Values{id: v}, nil
		})
		b.Edge(spec.Start, id)
	}
	graph, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	res, err := graph.Thread(s, "fan").Invoke(context.Background(), runtime.Values{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runtime.StatusDone {
		t.Fatalf("run ended %s, want done", res.Status)
	}
	for i := range n {
		id := "n" + strconv.Itoa(i)
		// The state comes back through the checkpoint's JSON.
		if got := res.State[id]; got != float64(i+10) {
			t.Errorf("channel %s = %v (%T), want %d", id, got, got, i+10)
		}
	}
	g.mu.Lock()
	most := g.most
	g.mu.Unlock()
	if most != n {
		t.Errorf("at most %d of the %d tasks' journal writes were in flight at once, want all %d (took %v)", most, n, n, time.Since(t0))
	}
}
