package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// builderChain is the durable benchmarks' graph: steps nodes built with
// runtime.Builder, one after the other, each writing the one last_write
// channel "n" (its number plus one): one superstep per node.
func builderChain(b *testing.B, steps int) *runtime.Graph[runtime.Values, runtime.Values] {
	b.Helper()
	bld := runtime.NewBuilder("chain").Channel("n", spec.LastWrite)
	prev := spec.Start
	for i := range steps {
		id := "n" + strconv.Itoa(i)
		bld.Node(id, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{"n": i + 1}, nil
		})
		bld.Edge(prev, id)
		prev = id
	}
	g, err := bld.Compile()
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// pgDSN returns the PostgreSQL server's DSN (pgtest.EnvDSN) with the
// pool's size set to conns, or skips the benchmark saying why.
func pgDSN(b *testing.B, conns int) string {
	b.Helper()
	d := os.Getenv(pgtest.EnvDSN)
	if d == "" {
		// Printed once, in every mode: go test shows a benchmark's skip
		// only with -v.
		why := fmt.Sprintf("no PostgreSQL server: %s is not set (a postgres:// URL; see README, \"PostgreSQL tests\")", pgtest.EnvDSN)
		noPGOnce.Do(func() { fmt.Println("bench: the PostgreSQL rows are skipped:", why) })
		b.Skip(why)
	}
	u, err := url.Parse(d)
	if err != nil {
		b.Fatalf("%s must be a postgres:// URL: %v", pgtest.EnvDSN, err)
	}
	q := u.Query()
	q.Set("pool_max_conns", strconv.Itoa(conns))
	u.RawQuery = q.Encode()
	return u.String()
}

var (
	benchSchemas atomic.Int64
	noPGOnce     sync.Once
)

// openPG opens a store in a fresh schema, dropped at cleanup.
func openPG(b *testing.B, conns int) *postgres.Store {
	b.Helper()
	schema := fmt.Sprintf("ilmek_bench_%d_%d", os.Getpid(), benchSchemas.Add(1))
	s, err := postgres.Open(context.Background(), pgDSN(b, conns), postgres.Schema(schema))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		s.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		s.Close()
	})
	return s
}

// openSQLite opens a store in a new file under the benchmark's temporary
// directory, with the default, durable settings (synchronous=FULL).
func openSQLite(b *testing.B) *sqlite.Store {
	b.Helper()
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// startBenchWorkers runs n workers on q, each running up to conc requests
// at once, until the benchmark ends.
func startBenchWorkers(b *testing.B, q *workers.Queue, g *runtime.Graph[runtime.Values, runtime.Values], steps, n, conc int, opts ...runtime.RunOption) {
	b.Helper()
	opts = append([]runtime.RunOption{runtime.WithRecursionLimit(steps + 1)}, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		w := workers.NewWorker(q, map[string]workers.Runnable{"chain": workers.Graph(g, opts...)},
			workers.Concurrency(conc), workers.Poll(50*time.Millisecond))
		wg.Go(func() { w.Run(ctx) })
	}
	b.Cleanup(func() { cancel(); wg.Wait() })
}

var threadSeq atomic.Int64

func newThread() string { return "t" + strconv.FormatInt(threadSeq.Add(1), 10) }

// parallel runs op b.N times, and at least conc times, on conc
// goroutines and reports supersteps/s (steps per op), requests/s and,
// when the disk's flush rate is known, supersteps/s as a ratio of it
// ("x_flush", the rate measured right after the runs, reported as
// flushes/s). ns/op is the time of all runs divided by b.N.
//
// Before the clock starts, each goroutine runs op once: the figures are
// a steady state, not the opening of the store's connections (a
// PostgreSQL pool opens one per goroutine, and plans each connection's
// prepared statements anew for their first five runs), which weighed on
// the many-thread rows of a short benchmark far more than on one thread's.
func parallel(b *testing.B, conc, steps int, op func(ctx context.Context) error) {
	b.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	var failed atomic.Value
	for range conc {
		wg.Go(func() {
			if err := op(ctx); err != nil {
				failed.CompareAndSwap(nil, err)
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	n := max(b.N, conc)
	var next atomic.Int64
	b.ResetTimer()
	t0 := time.Now()
	for range conc {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := op(ctx); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	d := time.Since(t0)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	sps := float64(n*steps) / d.Seconds()
	b.ReportMetric(sps, "supersteps/s")
	b.ReportMetric(float64(n)/d.Seconds(), "requests/s")
	if f := flushRate(b); f > 0 {
		b.ReportMetric(f, "flushes/s")
		b.ReportMetric(sps/f, "x_flush")
	}
}

// invokeOp runs g once on a new thread of cp.
func invokeOp(g *runtime.Graph[runtime.Values, runtime.Values], cp runtime.Checkpointer, steps int, opts ...runtime.RunOption) func(context.Context) error {
	opts = append([]runtime.RunOption{runtime.WithRecursionLimit(steps + 1)}, opts...)
	return func(ctx context.Context) error {
		res, err := g.Thread(cp, newThread()).Invoke(ctx, runtime.Values{}, opts...)
		if err == nil && res.Status != runtime.StatusDone {
			err = fmt.Errorf("a direct run ended %s, want done", res.Status)
		}
		return err
	}
}

// queueOp submits a request for a new thread to q and waits for its end.
func queueOp(q *workers.Queue) func(context.Context) error {
	return func(ctx context.Context) error {
		id, err := q.Submit(ctx, workers.Request{Graph: "chain", Thread: newThread(), Input: json.RawMessage(`{}`)})
		if err != nil {
			return err
		}
		o, err := q.Wait(ctx, id, time.Second)
		if err == nil && o.State != "done" {
			err = fmt.Errorf("request %d ended %s, want done: %s", id, o.State, o.Error)
		}
		return err
	}
}

// BenchmarkQueueVsDirect compares, on PostgreSQL in one run, a chain of
// Builder nodes run directly (Invoke on a new thread, one at a time) with
// the same chain through the queue and one worker running one request at
// a time (workers.Concurrency(1)), each request submitted and then waited
// for: chain100 in supersteps/s, chain10 in requests/s (a short request's
// fixed cost). The "direct-eventlog" row runs directly with
// runtime.WithEventLog, as a worker's runs do: the queue's cost less its
// event log. The "-nextwrite" rows run with DurableWithNextWrite.
func BenchmarkQueueVsDirect(b *testing.B) {
	next := runtime.WithDurability(runtime.DurableWithNextWrite)
	for _, steps := range []int{100, 10} {
		g := builderChain(b, steps)
		b.Run(fmt.Sprintf("chain%d/direct", steps), func(b *testing.B) {
			parallel(b, 1, steps, invokeOp(g, openPG(b, 4), steps))
		})
		b.Run(fmt.Sprintf("chain%d/direct-eventlog", steps), func(b *testing.B) {
			parallel(b, 1, steps, invokeOp(g, openPG(b, 4), steps, runtime.WithEventLog()))
		})
		b.Run(fmt.Sprintf("chain%d/queue-1worker", steps), func(b *testing.B) {
			q := workers.NewQueue(openPG(b, 4))
			startBenchWorkers(b, q, g, steps, 1, 1)
			parallel(b, 1, steps, queueOp(q))
		})
		b.Run(fmt.Sprintf("chain%d/direct-nextwrite", steps), func(b *testing.B) {
			parallel(b, 1, steps, invokeOp(g, openPG(b, 4), steps, next))
		})
		b.Run(fmt.Sprintf("chain%d/queue-1worker-nextwrite", steps), func(b *testing.B) {
			q := workers.NewQueue(openPG(b, 4))
			startBenchWorkers(b, q, g, steps, 1, 1, next)
			parallel(b, 1, steps, queueOp(q))
		})
	}
}

// builderStepChain is builderChain with a runtime.Step in each node: the
// node journals its number plus one (a function that returns at once, so
// the figure is what the Step's durable journal write costs) and writes it.
func builderStepChain(b *testing.B, steps int) *runtime.Graph[runtime.Values, runtime.Values] {
	b.Helper()
	bld := runtime.NewBuilder("chain").Channel("n", spec.LastWrite)
	prev := spec.Start
	for i := range steps {
		id := "n" + strconv.Itoa(i)
		bld.Node(id, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			v, err := runtime.Step(ctx, "effect", func() (int, error) { return i + 1, nil })
			if err != nil {
				return nil, err
			}
			return runtime.Values{"n": v}, nil
		})
		bld.Edge(prev, id)
		prev = id
	}
	g, err := bld.Compile()
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkStepCost compares, on PostgreSQL in one run, chain100 of
// Builder nodes run directly (Invoke on a new thread, one at a time)
// without and with a runtime.Step in each node. One op runs the chain once
// each way, in alternating order, on one store, so that both see the same
// load; it reports supersteps/s of each (nostep_sps, step_sps) and their
// ratio (x_nostep): what a durable step per node costs (one journal write,
// durable before the Step returns, besides the superstep's commit). It
// does so for each durability: "each" (DurableEachSuperstep, the default)
// and "nextwrite" (DurableWithNextWrite, where a Step's journal carries
// the checkpoint before it and plain supersteps share a commit by two).
func BenchmarkStepCost(b *testing.B) {
	const steps = 100
	plain, stepped := builderChain(b, steps), builderStepChain(b, steps)
	s := openPG(b, 4)
	for _, d := range []struct {
		name string
		opts []runtime.RunOption
	}{
		{"each", nil},
		{"nextwrite", []runtime.RunOption{runtime.WithDurability(runtime.DurableWithNextWrite)}},
	} {
		b.Run(d.name, func(b *testing.B) {
			alternate(b, steps, [2]func(context.Context) error{invokeOp(plain, s, steps, d.opts...), invokeOp(stepped, s, steps, d.opts...)},
				"nostep_sps", "step_sps", "x_nostep")
		})
	}
}

// alternate runs ops[0] and ops[1] (each a run of steps supersteps) once
// each per op, in alternating order, so that both see the same load and
// the same disk, and reports the supersteps/s of each (metrics a and b)
// and the ratio of their times (ratio: ops[1]'s over ops[0]'s).
func alternate(b *testing.B, steps int, ops [2]func(context.Context) error, a, c, ratio string) {
	var took [2]time.Duration
	ctx := context.Background()
	n := 0
	for b.Loop() {
		for k := range 2 {
			w := (n + k) % 2 // alternate which runs first
			t0 := time.Now()
			if err := ops[w](ctx); err != nil {
				b.Fatal(err)
			}
			took[w] += time.Since(t0)
		}
		n++
	}
	sps := func(d time.Duration) float64 { return float64(n*steps) / d.Seconds() }
	b.ReportMetric(sps(took[0]), a)
	b.ReportMetric(sps(took[1]), c)
	b.ReportMetric(took[1].Seconds()/took[0].Seconds(), ratio)
}

// BenchmarkEventLogCost compares, on SQLite and PostgreSQL, chain100 of
// Builder nodes run directly (Invoke on a new thread, one at a time)
// without and with runtime.WithEventLog, alternating within each op
// (alternate): it reports supersteps/s of each (nolog_sps, log_sps) and
// their ratio (x_nolog), what keeping a run's events costs (every queued
// run keeps them). Without a PostgreSQL server that row is skipped.
func BenchmarkEventLogCost(b *testing.B) {
	const steps = 100
	g := builderChain(b, steps)
	for _, st := range []struct {
		name string
		open func(*testing.B) runtime.Checkpointer
	}{
		{"sqlite", func(b *testing.B) runtime.Checkpointer { return openSQLite(b) }},
		{"postgres", func(b *testing.B) runtime.Checkpointer { return openPG(b, 4) }},
	} {
		b.Run(st.name, func(b *testing.B) {
			s := st.open(b)
			alternate(b, steps, [2]func(context.Context) error{invokeOp(g, s, steps), invokeOp(g, s, steps, runtime.WithEventLog())},
				"nolog_sps", "log_sps", "x_nolog")
		})
	}
}

// BenchmarkSubgraphSteps runs, on PostgreSQL, a graph whose one node is
// a subgraph of `tasks` parallel nodes, each with a runtime.Step (a
// function that returns at once): one op is a run on a new thread. The
// child's tasks all write their parent task's journal; the figure is what
// their Steps cost together (ns/op, and steps/s).
func BenchmarkSubgraphSteps(b *testing.B) {
	for _, tasks := range []int{1, 4} {
		b.Run(fmt.Sprintf("tasks=%d", tasks), func(b *testing.B) {
			child := runtime.NewBuilder("fan")
			out := map[string]string{}
			for i := range tasks {
				id := "c" + strconv.Itoa(i)
				child.Channel(id, spec.LastWrite)
				child.Node(id, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					v, err := runtime.Step(ctx, "effect", func() (int, error) { return i, nil })
					return runtime.Values{id: v}, err
				})
				child.Edge(spec.Start, id)
				out[id] = id
			}
			fan, err := child.Compile()
			if err != nil {
				b.Fatal(err)
			}
			parent := runtime.NewBuilder("top")
			for id := range out {
				parent.Channel(id, spec.LastWrite)
			}
			g, err := parent.Subgraph("sub", fan, nil, out).Edge(spec.Start, "sub").Edge("sub", spec.End).Compile()
			if err != nil {
				b.Fatal(err)
			}
			s := openPG(b, tasks+4)
			ctx := context.Background()
			t0 := time.Now()
			for b.Loop() {
				res, err := g.Thread(s, newThread()).Invoke(ctx, runtime.Values{})
				if err == nil && res.Status != runtime.StatusDone {
					err = fmt.Errorf("a run ended %s, want done", res.Status)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*tasks)/time.Since(t0).Seconds(), "steps/s")
		})
	}
}

// BenchmarkDurableThreads runs chain100 (Builder) durably on 1, 4, 16 and
// 64 threads at once: on SQLite (synchronous=FULL) and PostgreSQL
// directly (each superstep durable, and "nextwrite": with
// DurableWithNextWrite), and on PostgreSQL through the queue with 1 and 4 workers
// (each running up to threads/workers requests at once, so that as many
// requests run as threads are submitted). It reports supersteps/s in
// total and as a ratio of the disk's raw flush rate (x_flush; see
// BenchmarkFlush). The PostgreSQL pool has 2×threads+4 connections.
// Without a PostgreSQL server those rows are skipped with the reason.
func BenchmarkDurableThreads(b *testing.B) {
	const steps = 100
	g := builderChain(b, steps)
	for _, threads := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("sqlite/direct/threads=%d", threads), func(b *testing.B) {
			parallel(b, threads, steps, invokeOp(g, openSQLite(b), steps))
		})
		b.Run(fmt.Sprintf("sqlite/nextwrite/threads=%d", threads), func(b *testing.B) {
			parallel(b, threads, steps, invokeOp(g, openSQLite(b), steps, runtime.WithDurability(runtime.DurableWithNextWrite)))
		})
		b.Run(fmt.Sprintf("postgres/direct/threads=%d", threads), func(b *testing.B) {
			parallel(b, threads, steps, invokeOp(g, openPG(b, 2*threads+4), steps))
		})
		b.Run(fmt.Sprintf("postgres/nextwrite/threads=%d", threads), func(b *testing.B) {
			parallel(b, threads, steps, invokeOp(g, openPG(b, 2*threads+4), steps, runtime.WithDurability(runtime.DurableWithNextWrite)))
		})
		for _, n := range []int{1, 4} {
			b.Run(fmt.Sprintf("postgres/queue-%dworkers/threads=%d", n, threads), func(b *testing.B) {
				q := workers.NewQueue(openPG(b, 2*threads+4))
				startBenchWorkers(b, q, g, steps, n, max(1, threads/n))
				parallel(b, threads, steps, queueOp(q))
			})
		}
	}
}

// flushBytes is the size of one append of the raw flush loop, about a
// superstep's checkpoint of chain100.
const flushBytes = 200

// flushRate measures how many appends of flushBytes, each followed by
// fdatasync (fsync where there is none), the disk of the temporary
// directory completes per second on one goroutine, for 200 ms: the disk's
// limit for one durable commit after another. 0 when it could not be
// measured. parallel measures it right after each benchmark's timed runs:
// this machine's disk changes its rate several-fold within minutes, so a
// rate measured once per process said little of a row measured later
// (BenchmarkRatios alternates the two within each op).
func flushRate(b *testing.B) float64 {
	f, err := os.CreateTemp("", "ilmek-flush-")
	if err != nil {
		b.Logf("no flush rate: %v", err)
		return 0
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, flushBytes)
	n := 0
	t0 := time.Now()
	for time.Since(t0) < 200*time.Millisecond {
		if _, err := f.Write(buf); err != nil {
			b.Logf("no flush rate: %v", err)
			return 0
		}
		if err := fdatasync(f); err != nil {
			b.Logf("no flush rate: %v", err)
			return 0
		}
		n++
	}
	return float64(n) / time.Since(t0).Seconds()
}

// BenchmarkFlush is the raw flush loop itself: one op appends flushBytes
// to a file in the temporary directory and flushes it with fdatasync. Its
// flushes/s is the limit the durable figures are compared with.
func BenchmarkFlush(b *testing.B) {
	f, err := os.CreateTemp("", "ilmek-flush-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, flushBytes)
	t0 := time.Now()
	for b.Loop() {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := fdatasync(f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "flushes/s")
}
