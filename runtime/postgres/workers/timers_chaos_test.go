package workers_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

const timerThreads = 40

// timerGraph sleeps 2 s (parking its thread), then journals one step that
// counts the wake in the ledger under the thread's key.
func timerGraph(pool *pgxpool.Pool, schema string) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	return runtime.NewBuilder("timers").Channel("log", spec.Append).
		Node("nap", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(ctx, "nap", 2*time.Second); err != nil {
				return nil, err
			}
			if _, err := runtime.Step(ctx, "woke", func() (int, error) {
				return 1, effect(ctx, pool, schema, ctx.ThreadID(), ctx.ThreadID(), ctx.TaskID(), `"key":"woke#`)
			}); err != nil {
				return nil, err
			}
			return runtime.Values{"log": "woke"}, nil
		}).
		Edge(spec.Start, "nap").Compile()
}

// timerWorker is one worker process of TestTimersSurviveSIGKILL.
func timerWorker() error { return processWorker("timers", timerGraph, 50*time.Millisecond) }

// TestTimersSurviveSIGKILL: four worker processes run timerThreads start
// requests whose node sleeps 2 s, parking each thread; while the timers
// come due a random worker is SIGKILLed and restarted every
// chaosKillEvery. Every thread ends done, woken by at most one wake
// request that ran it (none when its start request was run again past
// the wake time), and the ledger counts one wake effect per thread, none
// of them journaled twice. The counts are
// printed.
func TestTimersSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("kills worker processes for seconds; go test without -short (as CI does) runs it")
	}
	q, s, schema := ledgerQueue(t)
	ctx := context.Background()
	for i := range timerThreads {
		if _, err := q.Submit(ctx, workers.Request{Graph: "timers", Thread: "w" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	procs := make([]*exec.Cmd, chaosWorkers)
	start := func(i int) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"=timers", envSchema+"="+schema)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = cmd
	}
	for i := range procs {
		start(i)
	}
	defer func() {
		for _, p := range procs {
			p.Process.Kill()
			p.Wait()
		}
	}()
	doneThreads := func() int {
		var n int
		if err := s.Pool().QueryRow(ctx, "SELECT count(*) FROM "+schema+".ilmek_threads WHERE status = 'done'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	rng := rand.New(rand.NewPCG(chaosSeed, chaosSeed))
	begin := time.Now()
	kills := 0
	for time.Since(begin) < 8*time.Second && doneThreads() < timerThreads {
		time.Sleep(chaosKillEvery)
		i := rng.IntN(chaosWorkers)
		procs[i].Process.Kill()
		procs[i].Wait()
		kills++
		start(i)
	}
	for doneThreads() < timerThreads && time.Since(begin) < 60*time.Second {
		time.Sleep(100 * time.Millisecond)
	}
	// A wake request queued for a thread that a re-run start finished
	// meanwhile ends later (cancelled, nothing due): count once none is
	// left queued or running.
	for time.Since(begin) < 60*time.Second {
		var open int
		if err := s.Pool().QueryRow(ctx, "SELECT count(*) FROM "+schema+".ilmek_requests WHERE kind = 'wake' AND state IN ('queued', 'running')").Scan(&open); err != nil {
			t.Fatal(err)
		}
		if open == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(begin)
	var effects, rerun, journaledTwice, wakesRan, wakesNotDue, wakesOther, reclaimed, twice int
	if err := s.Pool().QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE runs > 1), coalesce(sum(journaled), 0) FROM "+schema+".ledger").Scan(&effects, &rerun, &journaledTwice); err != nil {
		t.Fatal(err)
	}
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'done'), count(*) FILTER (WHERE state = 'cancelled'),
		count(*) FILTER (WHERE state NOT IN ('done', 'cancelled')), count(*) FILTER (WHERE claim > 1)
		FROM `+schema+`.ilmek_requests WHERE kind = 'wake'`).Scan(&wakesRan, &wakesNotDue, &wakesOther, &reclaimed); err != nil {
		t.Fatal(err)
	}
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM (SELECT thread_id FROM `+schema+`.ilmek_requests
		WHERE kind = 'wake' AND state = 'done' GROUP BY thread_id HAVING count(*) > 1) x`).Scan(&twice); err != nil {
		t.Fatal(err)
	}
	done := doneThreads()
	fmt.Printf("timers: %d workers, %d threads parked 2 s, %d SIGKILLs, took %v\ntimers: %d threads done; wake requests: %d ran, %d found nothing due, %d other, %d claimed more than once\ntimers: wake effects %d (%d executed again before their journal write, %d journaled twice)\n",
		chaosWorkers, timerThreads, kills, took.Round(time.Millisecond), done, wakesRan, wakesNotDue, wakesOther, reclaimed, effects, rerun, journaledTwice)
	if done != timerThreads || effects != timerThreads || journaledTwice != 0 {
		t.Errorf("%d threads done, %d wake effects, %d journaled twice; want %d, %d, 0", done, effects, journaledTwice, timerThreads, timerThreads)
	}
	// A start request whose worker died before the park committed runs
	// again past the wake time and does not park: that thread needs no
	// wake request.
	if wakesRan > timerThreads || twice != 0 || wakesOther != 0 {
		t.Errorf("%d wake requests ran (%d threads woken by more than one), %d neither ran nor found nothing due; want at most one per thread (%d), 0", wakesRan, twice, wakesOther, timerThreads)
	}
}
