package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/spec"
)

// envRestart, set to 1, lets TestRetryAcrossRestart restart the server
// (as runtime/postgres/workers' chaos test does).
const envRestart = "ILMEK_PGTEST_RESTART"

// retries counts a Store's retries by write.
type retries struct {
	mu   sync.Mutex
	byOp map[string]int
}

func (r *retries) note(_ context.Context, x checkpoint.Retry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byOp[x.Op]++
}

func (r *retries) get(op string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byOp[op]
}

// cutStore opens a Store on a pool of its own, whose connections carry an
// application name of their own, so cut can end them.
func cutStore(t *testing.T, what string, r *retries) (s *postgres.Store, cut func()) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	app := fmt.Sprintf("ilmek_cut_%s_%d", what, os.Getpid())
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err = postgres.OpenPool(context.Background(), pool, postgres.Schema(newSchema(t, what)), postgres.OnRetry(r.note))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	admin := sharedPool(t)
	return s, func() {
		var n int
		err := admin.QueryRow(context.Background(),
			"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n)
		if err != nil || n == 0 {
			t.Errorf("terminate the store's connections: %d ended, %v", n, err)
		}
	}
}

// chargeGraph runs Step("charge") and cuts the store's connections right
// after the effect (before its journal write), then, in a second node,
// cuts them again before the superstep's commit.
func chargeGraph(t *testing.T, charges *int, cut func()) *runtime.Graph[runtime.Values, runtime.Values] {
	g, err := runtime.NewBuilder("charge").Channel("paid", "").Channel("after", "").
		Node("charge", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			n, err := runtime.Step(ctx, "charge", func() (int, error) {
				*charges++
				cut()
				return 42, nil
			})
			return runtime.Values{"paid": n}, err
		}).
		Node("after", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			cut()
			return runtime.Values{"after": true}, nil
		}).
		Edge(spec.Start, "charge").Edge("charge", "after").Edge("after", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// runCharged runs chargeGraph on s with cut and checks that the run
// finished and charged once.
func runCharged(t *testing.T, s *postgres.Store, cut func()) {
	t.Helper()
	charges := 0
	g := chargeGraph(t, &charges, cut)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := g.Thread(s, "t1").Invoke(ctx, nil)
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("run: %s, %v", res.Status, err)
	}
	if charges != 1 {
		t.Errorf("charged %d times, want 1", charges)
	}
}

// TestRetryAfterTerminatedConnection: pg_terminate_backend of every
// connection of the store between an effect and its journal write, and
// again before a commit, neither fails the run nor runs the effect twice;
// the retries are reported. Before the retries the journal write failed,
// the run ended in error and its next run charged again.
func TestRetryAfterTerminatedConnection(t *testing.T) {
	r := &retries{byOp: map[string]int{}}
	s, cut := cutStore(t, "cut", r)
	runCharged(t, s, cut)
	if r.get("journal") == 0 || r.get("commit") == 0 {
		t.Errorf("retries %v, want at least one journal and one commit retry", r.byOp)
	}
	cp, err := s.Get(context.Background(), "t1", "")
	if err != nil || len(cp.Next) != 0 {
		t.Fatalf("latest checkpoint %+v, %v", cp, err)
	}
}

// TestRetryAcrossRestart is TestRetryAfterTerminatedConnection with a
// restart of the server in place of the cut; it runs only with
// ILMEK_PGTEST_RESTART=1 (it disturbs every other user of the server). The
// cut starts the restart and returns once the server refuses connections,
// so the journal write and the commit after it meet the server down and
// starting again. (A cut that waited for the restart to finish saw no
// retry: the pool replaced its dead connections on the next acquire.)
func TestRetryAcrossRestart(t *testing.T) {
	if os.Getenv(envRestart) != "1" {
		t.Skipf("%s=1 restarts the PostgreSQL server; not set", envRestart)
	}
	ver, _ := os.ReadDir("/etc/postgresql")
	if len(ver) == 0 {
		t.Fatalf("%s=1 but no cluster in /etc/postgresql", envRestart)
	}
	cfg, err := pgxpool.ParseConfig(dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	host, port := cfg.ConnConfig.Host, fmt.Sprint(cfg.ConnConfig.Port)
	var restart *exec.Cmd
	var out bytes.Buffer
	finish := func() { // waits for the restart under way, if any
		if restart == nil {
			return
		}
		if err := restart.Wait(); err != nil {
			t.Errorf("restart PostgreSQL: %v\n%s", err, out.String())
		}
		restart = nil
	}
	t.Cleanup(finish) // the server is up again for the tests after this one
	r := &retries{byOp: map[string]int{}}
	s, _ := cutStore(t, "restart", r)
	runCharged(t, s, func() {
		finish()
		out.Reset()
		restart = exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", ver[0].Name(), "main", "restart")
		restart.Stdout, restart.Stderr = &out, &out
		if err := restart.Start(); err != nil {
			t.Errorf("restart PostgreSQL: %v", err)
			restart = nil
			return
		}
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if exec.Command("pg_isready", "-q", "-h", host, "-p", port).Run() != nil {
				return // down: the write after the cut meets the restart
			}
		}
		t.Errorf("the server still accepted connections 20 s after its restart began")
	})
	finish()
	if r.get("journal") == 0 || r.get("commit") == 0 {
		t.Errorf("retries %v, want at least one journal and one commit retry", r.byOp)
	}
}
