package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// TestPostgres operates threads that a worker runs from the queue: the
// command lists and shows them, answers one through a resume request,
// forks it from its pause with the other answer, and cancels; every
// --json output decodes.
func TestPostgres(t *testing.T) {
	dsn, schema, st, _ := startWorker(t, "cli")
	ctx := context.Background()
	cli := func(want int, args ...string) string {
		t.Helper()
		code, out, errs := ilmek(append([]string{"--store", dsn, "--schema", schema}, args...)...)
		if code != want {
			t.Fatalf("ilmek %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out + errs
	}

	if code, _, errs := ilmek("--store", dsn, "--schema", schema+"_none", "threads"); code != exitFail || !strings.Contains(errs, "no ilmek schema") {
		t.Errorf("a schema that does not exist: exit %d\n%s", code, errs)
	}
	var n int
	if err := st.Pool().QueryRow(ctx, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1", schema+"_none").Scan(&n); err != nil || n != 0 {
		t.Errorf("ilmek created the schema it was pointed at (%d, %v)", n, err)
	}
	var page threadsPage
	mustDecode(t, []byte(cli(exitOK, "threads", "--json")), &page)
	if len(page.Threads) != 2 {
		t.Fatalf("threads: %+v", page.Threads)
	}
	if out := cli(exitOK, "threads", "--status", "interrupted"); !strings.Contains(out, "refund-1") || strings.Contains(out, "refund-2") {
		t.Errorf("threads --status interrupted:\n%s", out)
	}
	var v showView
	mustDecode(t, []byte(cli(exitOK, "show", "--json", "refund-1")), &v)
	if v.Status != runtime.StatusInterrupted || len(v.Pending) != 1 {
		t.Fatalf("show: %+v", v)
	}
	pause := v.Checkpoint
	if out := cli(exitOK, "show", "refund-1"); !strings.Contains(out, "review:interrupt#0") || !strings.Contains(out, "refund 250?") {
		t.Errorf("show:\n%s", out)
	}

	// Answer: a resume request, which the worker runs.
	cli(exitUsage, "answer", "refund-1", "review:interupt#0=true")
	var rv requestView
	mustDecode(t, []byte(cli(exitOK, "answer", "--json", "--wait", "refund-1", "review:interrupt#0=true")), &rv)
	if rv.Graph != "refund" || rv.Outcome == nil || rv.Outcome.State != "done" || approved(t, rv.Outcome.Result) != true {
		t.Fatalf("answer: %+v", rv)
	}
	// The answer was for the question as read: the request names its checkpoint.
	var expected *string
	if err := st.Pool().QueryRow(ctx, "SELECT expected_latest FROM "+pgx.Identifier{schema}.Sanitize()+".ilmek_requests WHERE id = $1", rv.Request).Scan(&expected); err != nil || expected == nil || *expected != pause {
		t.Errorf("the answer's request expects %v (%v), want the pause %s", expected, err, pause)
	}
	mustDecode(t, []byte(cli(exitOK, "show", "--json", "refund-1")), &v)
	if v.Status != runtime.StatusDone {
		t.Errorf("after the answer: %s", v.Status)
	}

	// Fork from the pause with the other answer: a new branch, done with
	// approved false; the history shows both branches' checkpoints.
	mustDecode(t, []byte(cli(exitOK, "fork", "--json", "--wait", "--from", pause, "--answer", "review:interrupt#0=false", "refund-1")), &rv)
	if rv.Outcome == nil || rv.Outcome.State != "done" || approved(t, rv.Outcome.Result) != false {
		t.Fatalf("fork: %+v %+v", rv, rv.Outcome)
	}
	var hs []historyEntry
	mustDecode(t, []byte(cli(exitOK, "history", "--json", "refund-1")), &hs)
	forks := 0
	for _, h := range hs {
		if h.ParentID == pause {
			forks++
		}
	}
	if forks != 2 {
		t.Errorf("history: %d checkpoints name the pause as parent, want 2 (the answer and the fork)", forks)
	}

	// A request a worker holds (a claim that lasts an hour, made here so
	// that no worker takes it): the thread is running, and cancel sets the
	// request's cancel flag.
	if _, err := st.Pool().Exec(ctx, `INSERT INTO `+schema+`.ilmek_requests (thread_id, graph, kind, policy, state, claim, claim_until)
		VALUES ('refund-1', 'refund', 'start', 'enqueue', 'running', 1, clock_timestamp() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	mustDecode(t, []byte(cli(exitOK, "threads", "--json", "--status", "running")), &page)
	if len(page.Threads) != 1 || page.Threads[0].ID != "refund-1" || page.Threads[0].Status != runtime.StatusRunning {
		t.Errorf("threads --status running: %+v", page.Threads)
	}
	var c struct {
		Thread    string
		Cancelled int
	}
	mustDecode(t, []byte(cli(exitOK, "cancel", "--json", "refund-1")), &c)
	if c.Thread != "refund-1" || c.Cancelled != 1 {
		t.Errorf("cancel: %+v", c)
	}
	var flagged bool
	if err := st.Pool().QueryRow(ctx, `SELECT cancel FROM `+schema+`.ilmek_requests WHERE state = 'running'`).Scan(&flagged); err != nil || !flagged {
		t.Errorf("the running request's cancel flag: %v (%v)", flagged, err)
	}
	if out := cli(exitFail, "check"); !strings.Contains(out, "pg_amcheck") {
		t.Errorf("check on PostgreSQL:\n%s", out)
	}
	if out := cli(exitFail, "answer", "refund-2", "true"); !strings.Contains(out, "waits on no question") {
		t.Errorf("answer on a done thread:\n%s", out)
	}
	cli(exitOK, "delete", "--yes", "refund-2")
	cli(exitFail, "show", "refund-2")
}

// approved is the approved channel of a result.
func approved(t *testing.T, result json.RawMessage) any {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(result, &s); err != nil {
		t.Fatalf("the result %s: %v", result, err)
	}
	return s["approved"]
}

// TestQueueOutcomes: answer and fork --wait exit 1 when the request did
// not succeed (here it ends error: the answer does not decode, or no
// worker has the graph), after printing the outcome without a State line
// when there is none (they used to exit 0, and print "State: null"); a
// fork request is printed as the fork it is, not as its resume.
func TestQueueOutcomes(t *testing.T) {
	dsn, schema, _, _ := startWorker(t, "outcomes")
	var v showView
	_, out, _ := ilmek("--store", dsn, "--schema", schema, "--json", "show", "refund-1")
	mustDecode(t, []byte(out), &v)
	pause := v.Checkpoint
	for _, c := range []struct {
		name string
		args []string
		code int
		// out and errs must appear in stdout and stderr, notOut must not
		// appear in stdout.
		out, errs, notOut []string
		// kind, when set, is the kind the --json output must name.
		kind string
	}{
		{name: "answer of the wrong type", args: []string{"answer", "--wait", "refund-1", `review:interrupt#0="yes"`}, code: exitFail,
			errs: []string{`the answer "yes" to interrupt "review:interrupt#0" does not decode into bool`, "nothing was submitted"}, notOut: []string{"submitted request"}},
		{name: "fork with an answer of the wrong type", args: []string{"fork", "--graph", "refund", "--from", pause, "--answer", "review:interrupt#0=1", "refund-1"}, code: exitFail,
			errs: []string{"does not decode into bool", "nothing was submitted"}, notOut: []string{"submitted request"}},
		{name: "answer refused", args: []string{"answer", "--wait", "--graph", "nosuch", "refund-1", "review:interrupt#0=true"}, code: exitFail,
			out: []string{"(resume, graph nosuch", "Outcome:", "error", `no graph "nosuch"`}, errs: []string{"ended error", "ilmek show refund-1"}, notOut: []string{"State:"}},
		{name: "answer refused json", args: []string{"answer", "--json", "--wait", "--graph", "nosuch", "refund-1", "review:interrupt#0=true"}, code: exitFail,
			errs: []string{"ended error"}, kind: "resume"},
		{name: "fork refused", args: []string{"fork", "--wait", "--graph", "nosuch", "--from", pause, "--answer", "review:interrupt#0=false", "refund-1"}, code: exitFail,
			out: []string{"(fork from " + pause, "error"}, errs: []string{"ended error"}, notOut: []string{"State:", "(resume"}},
		{name: "fork", args: []string{"fork", "--wait", "--graph", "refund", "--from", pause, "--answer", "review:interrupt#0=false", "refund-1"},
			out: []string{"(fork from " + pause, "Outcome:", "done", "State:", `"approved": false`}},
		{name: "fork json", args: []string{"fork", "--json", "--graph", "refund", "--from", pause, "--answer", "review:interrupt#0=true", "refund-1"}, kind: "fork"},
		{name: "fork with a key", args: []string{"fork", "--key", "retry-1", "--graph", "refund", "--from", pause, "--answer", "review:interrupt#0=true", "refund-1"}, out: []string{"submitted request"}},
		{name: "the same fork with its key again", args: []string{"fork", "--key", "retry-1", "--graph", "refund", "--from", pause, "--answer", "review:interrupt#0=true", "refund-1"}, out: []string{"submitted request"}},
		{name: "another fork with that key", args: []string{"fork", "--key", "retry-1", "--graph", "refund", "--from", pause, "--answer", "review:interrupt#0=false", "refund-1"}, code: exitFail,
			errs: []string{"request key names another request"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := ilmek(append([]string{"--store", dsn, "--schema", schema}, c.args...)...)
			expect(t, code, out, errs, want{code: c.code, out: c.out, notOut: c.notOut, errs: c.errs})
			if c.kind != "" {
				var rv requestView
				mustDecode(t, []byte(out), &rv)
				if rv.Kind != c.kind {
					t.Errorf("kind %q, want %q: %+v", rv.Kind, c.kind, rv)
				}
			}
		})
	}
}

// startWorker opens a new schema (named for the test: name) on the test
// server, runs a worker of the refund graph on its queue until the test
// ends, and has it run two threads: refund-1 waits on a person, refund-2
// is done.
func startWorker(t *testing.T, name string) (dsn, schema string, st *postgres.Store, q *workers.Queue) {
	t.Helper()
	dsn = pgtest.DSN(t)
	t.Setenv(envStore, "")
	ctx := context.Background()
	schema = fmt.Sprintf("ilmek_pgtest_%s_%d", name, os.Getpid())
	st, err := postgres.Open(ctx, dsn, postgres.Schema(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		st.Close()
	})
	q = workers.NewQueue(st)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	w := workers.NewWorker(q, map[string]workers.Runnable{"refund": workers.Graph(refunds(t))}, workers.Poll(20*time.Millisecond))
	go func() { w.Run(wctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })

	for _, r := range []struct {
		thread string
		amount float64
	}{{"refund-1", 250}, {"refund-2", 40}} {
		id, err := q.Submit(ctx, workers.Request{Graph: "refund", Thread: r.thread, Input: json.RawMessage(fmt.Sprintf(`{"amount": %v}`, r.amount))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.Wait(ctx, id, 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	return dsn, schema, st, q
}
