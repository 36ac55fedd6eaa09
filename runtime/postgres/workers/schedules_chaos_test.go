package workers_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

// envLong, set to 1, runs the tests that take a minute or more; .ci/run
// runs them in its serial step.
const envLong = "ILMEK_PGTEST_LONG"

// The shape of TestScheduleEveryTickOnce (the figures).
const (
	scheduleTicks = 60
	scheduleGrace = 500 * time.Millisecond // ticks of the restart's gap are caught up, not on time
)

// tickGraph journals one step that counts the firing in the ledger under
// its thread's key.
func tickGraph(pool *pgxpool.Pool, schema string) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	return runtime.NewBuilder("ticks").Channel("log", spec.Append).
		Node("tick", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(ctx, "count", func() (int, error) {
				return 1, effect(ctx, pool, schema, ctx.ThreadID(), ctx.ThreadID(), ctx.TaskID(), `"key":"count#`)
			}); err != nil {
				return nil, err
			}
			return runtime.Values{"log": "tick"}, nil
		}).
		Edge(spec.Start, "tick").Compile()
}

// scheduleWorker is one worker process of TestScheduleEveryTickOnce.
func scheduleWorker() error {
	return processWorker("ticks", tickGraph, 50*time.Millisecond, workers.ScheduleGrace(scheduleGrace))
}

// TestScheduleEveryTickOnce: a 1 s schedule with catch-up all (and
// overlap enqueue: a tick whose previous firing's worker was killed still
// fires, where the default, reject, would skip it), fired by
// four worker processes, over scheduleTicks ticks during which a random
// worker is SIGKILLed every 3 s and, once, all four are SIGKILLed and
// restarted 3 s later (the ticks of the gap are missed and caught up).
// Every tick from the first to the last fires exactly once: one firing
// row, one request, done, and one counted effect in the ledger (none
// journaled twice). The counts are printed.
func TestScheduleEveryTickOnce(t *testing.T) {
	if testing.Short() || os.Getenv(envLong) != "1" {
		t.Skipf("fires a schedule for over a minute; %s=1 without -short (.ci/run's serial step) runs it", envLong)
	}
	_, s, schema := ledgerQueue(t)
	ctx := context.Background()
	if _, err := s.CreateSchedule(ctx, checkpoint.Schedule{Name: "second", Graph: "ticks", Every: time.Second, CatchUp: checkpoint.CatchUpAll, Overlap: runtime.DoubleTextEnqueue}); err != nil {
		t.Fatal(err)
	}
	procs := make([]*exec.Cmd, chaosWorkers)
	start := func(i int) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"=schedules", envSchema+"="+schema)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = cmd
	}
	kill := func(i int) {
		procs[i].Process.Kill()
		procs[i].Wait()
	}
	for i := range procs {
		start(i)
	}
	defer func() {
		for i := range procs {
			kill(i)
		}
	}()
	fired := func() (n int, first, last time.Time) {
		if err := s.Pool().QueryRow(ctx, "SELECT count(*), coalesce(min(tick), now()), coalesce(max(tick), now()) FROM "+schema+".ilmek_schedule_firings").Scan(&n, &first, &last); err != nil {
			t.Fatal(err)
		}
		return n, first, last
	}
	rng := rand.New(rand.NewPCG(chaosSeed, chaosSeed))
	begin := time.Now()
	kills, restarted := 0, false
	for time.Since(begin) < 2*time.Minute {
		time.Sleep(3 * time.Second)
		if n, _, _ := fired(); n >= scheduleTicks {
			break
		}
		if !restarted && time.Since(begin) > 25*time.Second {
			for i := range procs {
				kill(i)
			}
			kills += len(procs)
			time.Sleep(3 * time.Second)
			for i := range procs {
				start(i)
			}
			restarted = true
			continue
		}
		i := rng.IntN(chaosWorkers)
		kill(i)
		kills++
		start(i)
	}
	if err := s.PauseSchedule(ctx, "second", true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // a firing in flight commits or rolls back
	var open int
	for time.Since(begin) < 3*time.Minute {
		if err := s.Pool().QueryRow(ctx, "SELECT count(*) FROM "+schema+".ilmek_requests WHERE state IN ('queued', 'running')").Scan(&open); err != nil {
			t.Fatal(err)
		}
		if open == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(begin)
	n, first, last := fired()
	var withRequest, skipped, requests, done, threads, effects, rerun, journaledTwice int
	if err := s.Pool().QueryRow(ctx, "SELECT count(request_id), count(*) FILTER (WHERE skipped <> ''), count(DISTINCT thread_id) FROM "+schema+".ilmek_schedule_firings").Scan(&withRequest, &skipped, &threads); err != nil {
		t.Fatal(err)
	}
	if err := s.Pool().QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE state = 'done') FROM "+schema+".ilmek_requests").Scan(&requests, &done); err != nil {
		t.Fatal(err)
	}
	if err := s.Pool().QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE runs > 1), coalesce(sum(journaled), 0) FROM "+schema+".ledger").Scan(&effects, &rerun, &journaledTwice); err != nil {
		t.Fatal(err)
	}
	span := int(last.Sub(first)/time.Second) + 1
	fmt.Printf("schedules: %d workers, %d SIGKILLs (one restart of all), took %v\nschedules: %d ticks from %s to %s, %d firings (%d skipped), %d requests (%d done, %d still open), %d effects (%d executed again before their journal write, %d journaled twice)\n",
		chaosWorkers, kills, took.Round(time.Millisecond), span, first.UTC().Format(time.TimeOnly), last.UTC().Format(time.TimeOnly), n, skipped, requests, done, open, effects, rerun, journaledTwice)
	if n < scheduleTicks || n != span || withRequest != n || skipped != 0 || threads != n {
		t.Errorf("%d firings over %d ticks, %d with a request, %d skipped, %d threads; want one per tick (at least %d), each with a request of its own", n, span, withRequest, skipped, threads, scheduleTicks)
	}
	if requests != n || done != n || effects != n || journaledTwice != 0 {
		t.Errorf("%d requests, %d done, %d effects, %d journaled twice; want %d, %d, %d, 0", requests, done, effects, journaledTwice, n, n, n)
	}
}
