package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/bench/graphs"
	"github.com/ilmek-go/ilmek/bench/workload"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// side is one side of a ratio: a round of it does some units of work
// (supersteps, or flushes of the raw loop) and returns how many.
type side func(ctx context.Context) (int, error)

// runsOf is a side that runs op on conc goroutines at once, each one
// after another each times: a round is conc×each runs of steps
// supersteps. A round ends with its slowest goroutine, so a round of
// many goroutines runs each op several times to keep that wait small
// against the round.
func runsOf(conc, each, steps int, op func(context.Context) error) side {
	return goroutinesOf(conc, each, steps, func(ctx context.Context, _ int) error { return op(ctx) })
}

// goroutinesOf is runsOf whose op is told which of the conc goroutines
// runs it (0 to conc-1).
func goroutinesOf(conc, each, units int, op func(ctx context.Context, g int) error) side {
	return func(ctx context.Context) (int, error) {
		var wg sync.WaitGroup
		errs := make([]error, conc)
		for g := range conc {
			wg.Go(func() {
				for range each {
					if errs[g] = op(ctx, g); errs[g] != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return 0, err
			}
		}
		return conc * each * units, nil
	}
}

// flushesOf is a side that appends flushBytes to f and flushes it n
// times: the disk's raw flush loop (BenchmarkFlush), as a round.
func flushesOf(f *os.File, n int) side {
	buf := make([]byte, flushBytes)
	return func(context.Context) (int, error) {
		for range n {
			if _, err := f.Write(buf); err != nil {
				return 0, err
			}
			if err := fdatasync(f); err != nil {
				return 0, err
			}
		}
		return n, nil
	}
}

// generatedOp is a run of the generated chain-100 package on a new
// thread of cp: the program the SQLite targets name, where the
// Builder chain's runs also pay for encoding runtime.Values.
func generatedOp(b *testing.B, cp runtime.Checkpointer, opts ...runtime.RunOption) func(context.Context) error {
	b.Helper()
	w, err := workload.Parse("chain-100")
	if err != nil {
		b.Fatal(err)
	}
	p, err := graphs.Generated(w)
	if err != nil {
		b.Fatal(err)
	}
	opts = append([]runtime.RunOption{runtime.WithRecursionLimit(w.RecursionLimit())}, opts...)
	return func(ctx context.Context) error {
		o, err := p(ctx, &workload.Thread{Store: cp, ID: newThread()}, opts...)
		if err == nil && o.Supersteps != w.Units() {
			err = fmt.Errorf("a generated chain-100 run took %d supersteps, want %d", o.Supersteps, w.Units())
		}
		return err
	}
}

// openBare opens a new SQLite file in WAL mode at synchronous FULL, as the
// store opens its writer (one connection, transactions that begin
// IMMEDIATE, the same driver), with the table of the bare rows.
func openBare(b *testing.B, table string) *sql.DB {
	b.Helper()
	uri := "file:" + filepath.Join(b.TempDir(), "bare.db") + "?_txlock=immediate&_pragma=busy_timeout(5000)&_pragma=synchronous(FULL)"
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, q := range []string{"PRAGMA journal_mode=WAL", table} {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	return db
}

// bareCommitsOf is a side that commits n one-row inserts of flushBytes
// into a bare SQLite file (openBare): SQLite's own floor on this disk,
// without the engine's rows, indexes or encoding.
func bareCommitsOf(b *testing.B, n int) side {
	b.Helper()
	db := openBare(b, "CREATE TABLE bare (id INTEGER PRIMARY KEY, v BLOB NOT NULL)")
	ins, err := db.Prepare("INSERT INTO bare (v) VALUES (?)")
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, flushBytes)
	return func(ctx context.Context) (int, error) {
		for range n {
			if _, err := ins.ExecContext(ctx, buf); err != nil {
				return 0, err
			}
		}
		return n, nil
	}
}

// bareLayout is how bareGroupOf's table keeps its rows.
type bareLayout int

const (
	// bareClustered clusters the rows by goroutine, as the store's
	// checkpoints are by thread: each goroutine's rows fill pages of their
	// own, and a batch writes a page per goroutine.
	bareClustered bareLayout = iota
	// bareAppended appends the rows in commit order: a batch's rows share
	// pages, and nothing finds a goroutine's rows but a scan.
	bareAppended
	// bareAppendedIndexed appends the rows in commit order and finds a
	// goroutine's through an index on (goroutine, seq), which only that
	// goroutine writes: the layout that keeps the checkpoints in commit
	// order and finds a thread's through an index of its own.
	bareAppendedIndexed
)

// bareGroupOf is a side that runs conc goroutines at once, each
// committing each one-row inserts of flushBytes into a bare SQLite file
// (openBare) through a group commit of the store's kind: the writes that
// arrive while a transaction is written share the next one and its
// flush, whose first write yields to the goroutines ready to run before
// it takes them; layout says how the table keeps the rows. It is
// SQLite's floor for concurrent commits on this disk: what sixteen
// writers sharing flushes do without the engine's work.
func bareGroupOf(b *testing.B, conc, each int, layout bareLayout) side {
	b.Helper()
	table := "CREATE TABLE bare (id INTEGER PRIMARY KEY, g INTEGER NOT NULL, seq INTEGER NOT NULL, v BLOB NOT NULL)"
	switch layout {
	case bareClustered:
		table = "CREATE TABLE bare (g INTEGER NOT NULL, seq INTEGER NOT NULL, v BLOB NOT NULL, PRIMARY KEY (g, seq)) WITHOUT ROWID"
	case bareAppendedIndexed:
		table += "; CREATE UNIQUE INDEX bare_g ON bare (g, seq)"
	}
	db := openBare(b, table)
	ins, err := db.Prepare("INSERT INTO bare (g, seq, v) VALUES (?, ?, ?)")
	if err != nil {
		b.Fatal(err)
	}
	type write struct {
		g, seq int
		done   chan error
	}
	var (
		mu    sync.Mutex
		queue []write
		busy  bool
		next  = make([]int, conc) // each goroutine's next seq, across rounds
	)
	errLead := errors.New("lead")
	buf := make([]byte, flushBytes)
	writeBatch := func(batch []write) {
		tx, err := db.Begin()
		if err == nil {
			st := tx.Stmt(ins)
			for _, w := range batch {
				if _, err = st.Exec(w.g, w.seq, buf); err != nil {
					break
				}
			}
			if err == nil {
				err = tx.Commit()
			} else {
				tx.Rollback()
			}
		}
		for _, w := range batch {
			w.done <- err
		}
	}
	commit := func(g, seq int) error {
		w := write{g, seq, make(chan error, 1)}
		mu.Lock()
		queue = append(queue, w)
		lead := !busy
		busy = true
		mu.Unlock()
		if !lead {
			if err := <-w.done; err != errLead {
				return err
			}
		}
		goruntime.Gosched()
		mu.Lock()
		batch := queue
		queue = nil
		mu.Unlock()
		writeBatch(batch)
		mu.Lock()
		if len(queue) > 0 {
			queue[0].done <- errLead
		} else {
			busy = false
		}
		mu.Unlock()
		return <-w.done
	}
	return goroutinesOf(conc, each, 1, func(_ context.Context, g int) error {
		next[g]++
		return commit(g, next[g])
	})
}

// bareInsertsPG is a side that runs conc goroutines at once, each
// committing each one-row inserts of flushBytes into a table of the
// store's schema, one statement a commit: what the server and this
// machine's cores do with as many concurrent commits, without the
// engine's statements.
func bareInsertsPG(b *testing.B, s *postgres.Store, conc, each int) side {
	b.Helper()
	ctx := context.Background()
	if _, err := s.Pool().Exec(ctx, "CREATE TABLE IF NOT EXISTS ilmek_bare (id bigserial PRIMARY KEY, v bytea NOT NULL)"); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, flushBytes)
	op := func(ctx context.Context) error {
		_, err := s.Pool().Exec(ctx, "INSERT INTO ilmek_bare (v) VALUES ($1)", buf)
		return err
	}
	return runsOf(conc, each, 1, op)
}

// rounds runs a round of each side per op, in alternating order, so that
// both see the same disk: this machine's disk changes its flush rate
// several-fold within minutes, which a figure measured before another
// does not survive. It reports each side's units per second over all its
// rounds (metrics an and dn), their ratio (ratio: num over den), and the
// share of rounds in which the numerator's rate was the higher (won).
func rounds(b *testing.B, num, den side, an, dn, ratio string) {
	ctx := context.Background()
	// A round of each before the clock: connections opened, statements
	// planned.
	for _, s := range []side{num, den} {
		if _, err := s(ctx); err != nil {
			b.Fatal(err)
		}
	}
	var took [2]time.Duration
	var units [2]int
	won, n := 0, 0
	for b.Loop() {
		var rate [2]float64
		for k := range 2 {
			w := (n + k) % 2
			t0 := time.Now()
			u, err := [2]side{num, den}[w](ctx)
			if err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			took[w] += d
			units[w] += u
			rate[w] = float64(u) / d.Seconds()
		}
		if rate[0] > rate[1] {
			won++
		}
		n++
	}
	r := func(i int) float64 { return float64(units[i]) / took[i].Seconds() }
	b.ReportMetric(r(0), an)
	b.ReportMetric(r(1), dn)
	b.ReportMetric(r(0)/r(1), ratio)
	b.ReportMetric(float64(won)/float64(n), "won")
}

// BenchmarkRatios measures the ratios issue 35 sets targets for, each in
// alternating rounds of its two sides on one disk (rounds), where
// BenchmarkDurableThreads measures each row on its own and its x_flush
// against a flush rate taken once per process. One op is a round of each
// side. Rows (chain100 of Builder nodes, a new thread per run):
//
//   - sqlite/1thread-vs-flush: one thread's durable supersteps/s on
//     SQLite (synchronous FULL) over the raw flush loop's flushes/s (100
//     flushes a round); the target is 0.9. The generated-* rows run the
//     generated chain-100 package instead of the Builder chain.
//   - sqlite/bare-vs-flush: commits/s of a one-row insert into a bare
//     SQLite file (WAL, synchronous FULL, the store's driver) over the
//     raw flush loop's: the most a SQLite commit can do on this disk.
//   - sqlite/bare16-vs-1: sixteen goroutines committing one-row inserts
//     through a group commit of the store's kind over one (bareGroupOf),
//     into a table clustered by goroutine as the store's checkpoints are
//     by thread: how far this disk and driver scale concurrent commits
//     without the engine. The appended row: into a table whose rows are
//     appended in commit order, so that a batch's rows share pages; the
//     appended-indexed row: the same with an index by goroutine, which a
//     layout in commit order needs to find a thread's checkpoints.
//   - sqlite/16threads-vs-1: sixteen threads at once over one; target 5
//     (the generated row: of the generated chain-100).
//   - postgres/16threads-vs-1: the same on PostgreSQL; target 4.
//   - postgres/bare16-vs-1: sixteen goroutines committing one-row
//     inserts at once over one: how far this server and machine scale
//     concurrent commits without the engine.
//   - postgres/worker-vs-direct: a request at a time through a queue with
//     one worker over a direct Invoke; target 0.8.
//   - postgres/worker-vs-direct-eventlog: the same over a direct Invoke
//     that stores its events as a worker's runs do (runtime.WithEventLog):
//     what the queue itself costs, apart from the event log every queued
//     run keeps.
//   - postgres/step-vs-nostep: a runtime.Step in every node over none, a
//     run at a time; the target is a cost of at most 1.3 (ratio ≥ 0.77).
//
// The "nextwrite" rows run with DurableWithNextWrite; the
// "nextwrite-vs-each" row runs the Steps with it and the chain without
// Steps with the default (a Step's journal then carries the checkpoint
// before it: one commit a superstep either way). Without a
// PostgreSQL server its rows are skipped with the reason.
func BenchmarkRatios(b *testing.B) {
	const steps = 100
	g, stepped := builderChain(b, steps), builderStepChain(b, steps)
	next := runtime.WithDurability(runtime.DurableWithNextWrite)
	builder := func(b *testing.B, opts ...runtime.RunOption) func(context.Context) error {
		return invokeOp(g, openSQLite(b), steps, opts...)
	}
	generated := func(b *testing.B, opts ...runtime.RunOption) func(context.Context) error {
		return generatedOp(b, openSQLite(b), opts...)
	}
	for _, d := range []struct {
		name string
		op   func(*testing.B, ...runtime.RunOption) func(context.Context) error
		opts []runtime.RunOption
	}{
		{"each", builder, nil},
		{"nextwrite", builder, []runtime.RunOption{next}},
		{"generated-each", generated, nil},
		{"generated-nextwrite", generated, []runtime.RunOption{next}},
	} {
		b.Run("sqlite/1thread-vs-flush/"+d.name, func(b *testing.B) {
			f, err := os.CreateTemp(b.TempDir(), "ilmek-flush-")
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			rounds(b, runsOf(1, 1, steps, d.op(b, d.opts...)), flushesOf(f, 100), "supersteps/s", "flushes/s", "x_flush")
		})
	}
	b.Run("sqlite/bare-vs-flush", func(b *testing.B) {
		f, err := os.CreateTemp(b.TempDir(), "ilmek-flush-")
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		rounds(b, bareCommitsOf(b, 100), flushesOf(f, 100), "commits/s", "flushes/s", "x_flush")
	})
	for _, d := range []struct {
		name   string
		layout bareLayout
	}{{"bare16-vs-1", bareClustered}, {"bare16-vs-1/appended", bareAppended}, {"bare16-vs-1/appended-indexed", bareAppendedIndexed}} {
		b.Run("sqlite/"+d.name, func(b *testing.B) {
			rounds(b, bareGroupOf(b, 16, 25, d.layout), bareGroupOf(b, 1, 100, d.layout), "commits16/s", "commits1/s", "x_one")
		})
	}
	b.Run("sqlite/16threads-vs-1", func(b *testing.B) {
		s := openSQLite(b)
		rounds(b, runsOf(16, 4, steps, invokeOp(g, s, steps)), runsOf(1, 1, steps, invokeOp(g, s, steps)),
			"threads16_sps", "threads1_sps", "x_one")
	})
	b.Run("sqlite/16threads-vs-1/generated", func(b *testing.B) {
		op := generatedOp(b, openSQLite(b))
		rounds(b, runsOf(16, 4, steps, op), runsOf(1, 1, steps, op), "threads16_sps", "threads1_sps", "x_one")
	})
	b.Run("postgres/16threads-vs-1", func(b *testing.B) {
		s := openPG(b, 36)
		rounds(b, runsOf(16, 4, steps, invokeOp(g, s, steps)), runsOf(1, 1, steps, invokeOp(g, s, steps)),
			"threads16_sps", "threads1_sps", "x_one")
	})
	b.Run("postgres/bare16-vs-1", func(b *testing.B) {
		s := openPG(b, 36)
		rounds(b, bareInsertsPG(b, s, 16, 25), bareInsertsPG(b, s, 1, 100), "commits16/s", "commits1/s", "x_one")
	})
	b.Run("postgres/worker-vs-direct", func(b *testing.B) {
		s := openPG(b, 8)
		q := workers.NewQueue(s)
		startBenchWorkers(b, q, g, steps, 1, 1)
		rounds(b, runsOf(1, 1, steps, queueOp(q)), runsOf(1, 1, steps, invokeOp(g, s, steps)),
			"worker_sps", "direct_sps", "x_direct")
	})
	b.Run("postgres/worker-vs-direct-eventlog", func(b *testing.B) {
		s := openPG(b, 8)
		q := workers.NewQueue(s)
		startBenchWorkers(b, q, g, steps, 1, 1)
		rounds(b, runsOf(1, 1, steps, queueOp(q)), runsOf(1, 1, steps, invokeOp(g, s, steps, runtime.WithEventLog())),
			"worker_sps", "direct_sps", "x_direct")
	})
	for _, d := range []struct {
		name        string
		step, plain []runtime.RunOption
	}{
		{"each", nil, nil},
		{"nextwrite", []runtime.RunOption{next}, []runtime.RunOption{next}},
		{"nextwrite-vs-each", []runtime.RunOption{next}, nil},
	} {
		b.Run(fmt.Sprintf("postgres/step-vs-nostep/%s", d.name), func(b *testing.B) {
			s := openPG(b, 4)
			rounds(b, runsOf(1, 1, steps, invokeOp(stepped, s, steps, d.step...)), runsOf(1, 1, steps, invokeOp(g, s, steps, d.plain...)),
				"step_sps", "nostep_sps", "x_nostep")
		})
	}
}
