// Command workers runs a pool of worker processes that drain a queue of run
// requests kept in PostgreSQL, and a submitter that queues requests and
// waits for their outcomes from its own process:
//
//	go run ./examples/workers -db 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable' -workers 3 -threads 20
//
// It starts -workers copies of itself as worker processes (-role worker),
// submits one start request per thread, waits for every outcome, prints
// how many ended done and which worker process ran each, and stops the
// workers. Any process that can reach the database can submit, wait, or
// work: run `-role worker` on other machines and they share the queue.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "workers:", err)
		os.Exit(1)
	}
}

// config is what the flags say.
type config struct {
	db, role, schema string
	workers, threads int
}

func parseFlags(args []string, out io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("workers", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.db, "db", os.Getenv("ILMEK_POSTGRES_DSN"), "PostgreSQL `URL` (default $ILMEK_POSTGRES_DSN)")
	fs.StringVar(&c.role, "role", "submit", "`role` of this process: submit (start workers, submit, wait) or worker")
	fs.StringVar(&c.schema, "schema", "ilmek_workers_example", "PostgreSQL `schema` of the queue and the threads")
	fs.IntVar(&c.workers, "workers", 3, "worker processes to start")
	fs.IntVar(&c.threads, "threads", 20, "threads to run, one request each")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.db == "":
		return c, errors.New("no database: pass -db postgres://... or set ILMEK_POSTGRES_DSN")
	case c.role != "submit" && c.role != "worker":
		return c, fmt.Errorf("-role %q: want submit or worker", c.role)
	case c.workers < 1 || c.threads < 1:
		return c, errors.New("-workers and -threads must be at least 1")
	}
	return c, nil
}

// order is the graph the workers run: three supersteps, each with a
// journaled step.
func order() (*runtime.Graph[runtime.Values, runtime.Values], error) {
	b := runtime.NewBuilder("order").Channel("log", spec.Append).Channel("worker", spec.LastWrite)
	prev := spec.Start
	for _, name := range []string{"reserve", "charge", "ship"} {
		b.Node(name, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(ctx, name, func() (string, error) {
				time.Sleep(5 * time.Millisecond) // the effect
				return name + " " + ctx.ThreadID(), nil
			}); err != nil {
				return nil, err
			}
			return runtime.Values{"log": name, "worker": os.Getpid()}, nil
		})
		b.Edge(prev, name)
		prev = name
	}
	return b.Compile()
}

func run(ctx context.Context, args []string, out io.Writer) error {
	c, err := parseFlags(args, out)
	if err != nil {
		return err
	}
	store, err := postgres.Open(ctx, c.db, postgres.Schema(c.schema), postgres.LeaseTTL(5*time.Second))
	if err != nil {
		return err
	}
	defer store.Close()
	q := workers.NewQueue(store)
	if c.role == "worker" {
		g, err := order()
		if err != nil {
			return err
		}
		err = workers.NewWorker(q, map[string]workers.Runnable{"order": workers.Graph(g)}, workers.ClaimTTL(5*time.Second)).Run(ctx)
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	return submit(ctx, c, q, out)
}

// submit starts the worker processes, queues one request per thread, waits
// for every outcome and stops the workers.
func submit(ctx context.Context, c config, q *workers.Queue, out io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			p.Process.Signal(os.Interrupt)
			p.Wait()
		}
	}()
	for range c.workers {
		p := exec.Command(self, "-role", "worker", "-db", c.db, "-schema", c.schema)
		p.Env = os.Environ()
		p.Stderr = os.Stderr
		if err := p.Start(); err != nil {
			return err
		}
		procs = append(procs, p)
	}
	fmt.Fprintf(out, "started %d worker processes\n", len(procs))
	run := time.Now().UnixNano()
	ids := make([]int64, c.threads)
	for i := range ids {
		thread := fmt.Sprintf("order-%d-%d", run, i)
		if ids[i], err = q.Submit(ctx, workers.Request{Graph: "order", Thread: thread}); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "submitted %d requests\n", len(ids))
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	done := 0
	byWorker := map[string]int{}
	for _, id := range ids {
		o, err := q.Wait(wctx, id, 20*time.Millisecond)
		if err != nil {
			return err
		}
		if o.State == "done" {
			done++
		}
		var st struct {
			Worker any `json:"worker"`
		}
		if json.Unmarshal(o.Result, &st) == nil {
			byWorker[fmt.Sprint(st.Worker)]++
		}
	}
	fmt.Fprintf(out, "%d of %d requests done\n", done, len(ids))
	pids := make([]string, 0, len(byWorker))
	for p := range byWorker {
		pids = append(pids, p)
	}
	sort.Strings(pids)
	for _, p := range pids {
		fmt.Fprintf(out, "  worker pid %s ran the last superstep of %d\n", p, byWorker[p])
	}
	if done != len(ids) {
		return fmt.Errorf("%d requests did not end done", len(ids)-done)
	}
	return nil
}
