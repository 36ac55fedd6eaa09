// Command workers runs a pool of worker processes that drain a queue of run
// requests kept in PostgreSQL, and a submitter that queues requests and
// waits for their outcomes from its own process:
//
//	go run ./examples/workers -db 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable' -workers 3 -threads 20
//
// It starts -workers copies of itself as worker processes (-role worker),
// submits one start request per thread, and, while the workers run them,
// kills one worker process (-kill, on by default) the way a crash would:
// the requests it held are claimed again by the others once its claims
// expire, and continue from their last checkpoint, so each order's steps
// (reserve, charge, ship: effects appended to a file) still run once. It
// waits for every outcome, prints which worker finished how many requests,
// how many were claimed again and whether any effect ran twice, and stops
// the workers. Any process that can reach the database can submit, wait,
// or work: run `-role worker` on other machines and they share the queue.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
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
	db, role, schema, effects string
	workers, threads          int
	kill                      bool
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
	fs.BoolVar(&c.kill, "kill", true, "kill one worker process while it runs requests, to show them claimed again")
	fs.StringVar(&c.effects, "effects", "", "`file` the steps' effects are appended to (the submitter makes a temporary one)")
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

// claimTTL is how long a dead worker's claims and leases keep its
// requests: short, so the example does not wait long for the reclaim.
const claimTTL = 2 * time.Second

// order is the graph the workers run: three supersteps, each with a
// journaled step whose effect appends a line to the effects file: the
// step, the thread and the worker's pid.
func order(effects string) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	b := runtime.NewBuilder("order").Channel("log", spec.Append).Channel("worker", spec.LastWrite)
	prev := spec.Start
	for _, name := range []string{"reserve", "charge", "ship"} {
		b.Node(name, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(ctx, name, func() (string, error) {
				time.Sleep(100 * time.Millisecond) // the work
				return name + " " + ctx.ThreadID(), appendLine(effects, fmt.Sprintf("%s %s %d", name, ctx.ThreadID(), os.Getpid()))
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
	store, err := postgres.Open(ctx, c.db, postgres.Schema(c.schema), postgres.LeaseTTL(claimTTL))
	if err != nil {
		return err
	}
	defer store.Close()
	q := workers.NewQueue(store)
	if c.role == "worker" {
		g, err := order(c.effects)
		if err != nil {
			return err
		}
		err = workers.NewWorker(q, map[string]workers.Runnable{"order": workers.Graph(g)}, workers.ClaimTTL(claimTTL)).Run(ctx)
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	return submit(ctx, c, q, out)
}

// appendLine appends line to the file, in one write (O_APPEND: the
// workers' lines never interleave).
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// submit starts the worker processes, queues one request per thread, kills
// a worker while they run, waits for every outcome and stops the workers.
func submit(ctx context.Context, c config, q *workers.Queue, out io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ilmek-workers-example")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	effects := filepath.Join(dir, "effects")
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			p.Process.Signal(os.Interrupt)
			p.Wait()
		}
	}()
	for range c.workers {
		p := exec.Command(self, "-role", "worker", "-db", c.db, "-schema", c.schema, "-effects", effects)
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
	killed := ""
	if c.kill && len(procs) > 1 {
		// Once a worker has run the first step of an order (so it holds a
		// request with two steps to go), kill it in the middle of its
		// steps, as a crash would: no signal it can handle, no claim
		// released.
		pid, err := firstStep(wctx, effects)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(procs, func(p *exec.Cmd) bool { return p.Process.Pid == pid })
		if i < 0 {
			return fmt.Errorf("the first step ran in pid %d, which is none of the workers started", pid)
		}
		time.Sleep(50 * time.Millisecond)
		if err := procs[i].Process.Kill(); err != nil {
			return err
		}
		procs[i].Wait()
		killed = fmt.Sprint(pid)
		procs = slices.Delete(procs, i, i+1)
		fmt.Fprintf(out, "killed worker pid %s while it ran requests\n", killed)
	}
	done, reclaimed := 0, 0
	byWorker := map[string]int{}
	for _, id := range ids {
		o, err := q.Wait(wctx, id, 20*time.Millisecond)
		if err != nil {
			return err
		}
		if o.State == "done" {
			done++
		}
		if o.Claims > 1 {
			reclaimed++
		}
		var st struct {
			Worker any `json:"worker"`
		}
		if json.Unmarshal(o.Result, &st) == nil {
			byWorker[fmt.Sprint(st.Worker)]++
		}
	}
	fmt.Fprintf(out, "%d of %d requests done\n", done, len(ids))
	if killed != "" {
		fmt.Fprintf(out, "  %d requests held by the killed worker were claimed again after its claims expired (%s) and continued from their last checkpoint\n", reclaimed, claimTTL)
	}
	pids := make([]string, 0, len(byWorker))
	for p := range byWorker {
		pids = append(pids, p)
	}
	sort.Strings(pids)
	for _, p := range pids {
		fmt.Fprintf(out, "  worker pid %s finished %d requests\n", p, byWorker[p])
	}
	ran, twice, err := countEffects(effects)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "effects: %d steps ran, %d of them twice\n", ran, twice)
	if done != len(ids) {
		return fmt.Errorf("%d requests did not end done", len(ids)-done)
	}
	return nil
}

// firstStep waits until a worker process has run the first step
// (reserve) of an order, as the effects file says, and returns its pid.
func firstStep(ctx context.Context, effects string) (int, error) {
	for {
		data, err := os.ReadFile(effects)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		for _, l := range strings.Split(string(data), "\n") {
			var thread string
			var pid int
			if n, _ := fmt.Sscanf(l, "reserve %s %d", &thread, &pid); n == 2 {
				return pid, nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no worker ran a step: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// countEffects counts the lines of the effects file, and those that
// repeat an earlier one's step and thread (by any worker): a step that ran
// again.
func countEffects(path string) (ran, twice int, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		step := l[:max(0, strings.LastIndexByte(l, ' '))]
		ran++
		if seen[step] {
			twice++
		}
		seen[step] = true
	}
	return ran, twice, nil
}
