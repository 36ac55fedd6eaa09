package workers_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

const deadMaxClaims = 3

// suicideWorker is a worker process whose graph SIGKILLs it every time.
func suicideWorker() error {
	ctx := context.Background()
	s, err := postgres.Open(ctx, os.Getenv(pgtest.EnvDSN), postgres.Schema(os.Getenv(envSchema)), postgres.LeaseTTL(crashTTL))
	if err != nil {
		return err
	}
	g, err := runtime.NewBuilder("suicide").Channel("log", spec.Append).
		Node("die", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}).Edge(spec.Start, "die").Compile()
	if err != nil {
		return err
	}
	return workers.NewWorker(workers.NewQueue(s), map[string]workers.Runnable{"suicide": workers.Graph(g)},
		workers.ClaimTTL(crashTTL), workers.Poll(10*time.Millisecond), workers.MaxClaims(deadMaxClaims)).Run(ctx)
}

// TestRequestThatKillsItsWorkerEndsDead: a request whose run SIGKILLs its
// worker process every time is claimed deadMaxClaims times (a new process
// started after each death), then the next claim ends it dead: Dead lists
// it with each claim's worker and error; Retry queues it again (and
// refuses a request that is not dead); Prune keeps it, and deletes ended
// requests older than it is told.
func TestRequestThatKillsItsWorkerEndsDead(t *testing.T) {
	q := openQueue(t, postgres.LeaseTTL(crashTTL))
	ctx := context.Background()
	schema := q.Store().SchemaName()
	id, err := q.Submit(ctx, workers.Request{Graph: "suicide", Thread: "t"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	processes := 0
	for {
		o, err := q.Outcome(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if o.Ended() {
			// Claims given back (the dead worker's thread lease had not
			// expired yet) are claims too, but do not count.
			if o.State != workers.StateDead || o.Claims < deadMaxClaims+1 {
				t.Fatalf("request %d: state %s after %d claims (err %q); want dead after at least %d", id, o.State, o.Claims, o.Error, deadMaxClaims+1)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("request %d still %s after %d worker processes", id, o.State, processes)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"=suicide", envSchema+"="+schema)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		processes++
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	dead, err := q.Dead(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) != 1 || dead[0].ID != id || !strings.Contains(dead[0].Error, "claimed 3 times") {
		t.Fatalf("dead requests: %+v; want request %d", dead, id)
	}
	expired := 0
	for i, c := range dead[0].Claims {
		if c.Claim < 1 || !strings.HasPrefix(c.Worker, "pid ") || c.Error == "" || c.At.IsZero() || c.Released == (c.Error == workers.ErrClaimExpired) {
			t.Errorf("claim %d: %+v; want a claim by a worker process, expired or released with its error", i, c)
		}
		if !c.Released {
			expired++
		}
	}
	if expired != deadMaxClaims {
		t.Errorf("%d expired claims recorded (%+v); want %d", expired, dead[0].Claims, deadMaxClaims)
	}
	if n, err := q.Prune(ctx, 0); err != nil || n != 0 {
		t.Errorf("Prune removed %d (err %v); want the dead request kept", n, err)
	}
	if err := q.Retry(ctx, id); err != nil {
		t.Fatal(err)
	}
	if o, _ := q.Outcome(ctx, id); o.State != "queued" {
		t.Errorf("after Retry, request %d is %s; want queued", id, o.State)
	}
	if err := q.Retry(ctx, id); !errors.Is(err, workers.ErrNotDead) {
		t.Errorf("Retry of a queued request: %v; want ErrNotDead", err)
	}
	if err := q.Retry(ctx, id+100); !errors.Is(err, workers.ErrNoRequest) {
		t.Errorf("Retry of no request: %v; want ErrNoRequest", err)
	}
	if _, err := q.Cancel(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		keep time.Duration
		want int64
	}{{time.Hour, 0}, {0, 1}} {
		if n, err := q.Prune(ctx, c.keep); err != nil || n != c.want {
			t.Errorf("Prune(%v) removed %d (err %v); want %d", c.keep, n, err, c.want)
		}
	}
}
