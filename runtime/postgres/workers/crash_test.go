package workers_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

const (
	envChild  = "ILMEK_PGTEST_WORKER"
	envSchema = "ILMEK_PGTEST_SCHEMA"
	crashTTL  = 500 * time.Millisecond
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		run := childWorker
		switch mode {
		case "chaos":
			run = chaosWorker
		case "timers":
			run = timerWorker
		case "suicide":
			run = suicideWorker
		case "schedules":
			run = scheduleWorker
		case "steps":
			run = dyingStepsWorker
		}
		if err := run(); err != nil {
			fmt.Fprintln(os.Stderr, "child worker:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// ledgerGraph runs three supersteps a, b, c; each journals one step that
// inserts a row with a unique key into the effects ledger, so a step
// executed twice fails the run. pause is how long b sleeps after its step.
func ledgerGraph(pool *pgxpool.Pool, schema string, pause time.Duration) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	node := func(name string, sleep time.Duration) runtime.NodeFunc {
		return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(ctx, "effect", func() (int, error) {
				_, err := pool.Exec(ctx, "INSERT INTO "+schema+".ledger (key) VALUES ($1)", ctx.ThreadID()+"/"+name)
				return 1, err
			}); err != nil {
				return nil, err
			}
			select {
			case <-time.After(sleep):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return runtime.Values{"log": name}, nil
		}
	}
	return runtime.NewBuilder("ledger").Channel("log", spec.Append).
		Node("a", node("a", 0)).Node("b", node("b", pause)).Node("c", node("c", 0)).
		Edge(spec.Start, "a").Edge("a", "b").Edge("b", "c").Compile()
}

// childWorker is a worker process running the ledger graph, with b pausing
// long enough to be killed in it.
func childWorker() error {
	ctx := context.Background()
	schema := os.Getenv(envSchema)
	s, err := postgres.Open(ctx, os.Getenv(pgtest.EnvDSN), postgres.Schema(schema), postgres.LeaseTTL(crashTTL))
	if err != nil {
		return err
	}
	g, err := ledgerGraph(s.Pool(), schema, time.Minute)
	if err != nil {
		return err
	}
	return workers.NewWorker(workers.NewQueue(s), map[string]workers.Runnable{"ledger": workers.Graph(g)},
		workers.ClaimTTL(crashTTL), workers.Poll(10*time.Millisecond)).Run(ctx)
}

// TestDeadWorkersRequestIsClaimedAgain: a worker process is SIGKILLed in
// the second superstep of a request, after that superstep's step was
// journaled. Another worker claims the request once the claim expired,
// continues from the last checkpoint and journal, and finishes it: every
// step executed exactly once (the ledger's unique key would fail a second
// execution) and the request ends done after two claims.
func TestDeadWorkersRequestIsClaimedAgain(t *testing.T) {
	q := openQueue(t, postgres.LeaseTTL(crashTTL))
	s := q.Store()
	schema := s.SchemaName()
	ctx := context.Background()
	if _, err := s.Pool().Exec(ctx, "CREATE TABLE "+schema+".ledger (key text PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	id, err := q.Submit(ctx, workers.Request{Graph: "ledger", Thread: "t"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"=1", envSchema+"="+schema)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	ledger := func() int {
		var n int
		if err := s.Pool().QueryRow(ctx, "SELECT count(*) FROM "+schema+".ledger").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for ledger() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the worker process did not reach b's step in 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // b's journal write is done before its pause
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	g, err := ledgerGraph(s.Pool(), schema, 0)
	if err != nil {
		t.Fatal(err)
	}
	startWorkers(t, q, map[string]workers.Runnable{"ledger": workers.Graph(g)}, 1, workers.ClaimTTL(crashTTL))
	o := wait(t, q, id)
	if o.State != "done" || logOf(t, o) != "[a b c]" || o.Claims < 2 {
		t.Errorf("the dead worker's request: state %s, log %s, claims %d, err %q; want done, [a b c], at least 2 claims", o.State, logOf(t, o), o.Claims, o.Error)
	}
	if n := ledger(); n != 3 {
		t.Errorf("the ledger has %d effects, want 3 (each step once)", n)
	}
}
