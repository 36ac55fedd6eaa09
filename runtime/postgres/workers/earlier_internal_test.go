package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/internal/queuehook"
	"github.com/ilmek-go/ilmek/spec"
)

// This file's tests each leave a request as an earlier claim of it leaves
// it when its claim expired while its worker lives on and still holds the
// thread's lease (expireFirstClaim), run that earlier claim's run by hand
// (run id "earlier"), and let a worker claim the request again while that
// run goes on.

// expireFirstClaim makes request id look claimed once by a worker named
// "earlier", whose claim expired: base the thread's latest checkpoint that
// claim found, and its run's id "earlier".
func expireFirstClaim(t *testing.T, q *Queue, id int64, base string) {
	t.Helper()
	if _, err := q.store.Pool().Exec(context.Background(), "UPDATE "+q.t("ilmek_requests")+" SET state = 'running', claim = 1, worker = 'earlier', "+
		"claim_until = clock_timestamp() - interval '1 second', base_cp = $2, run_ids = '{earlier}', "+
		"claims_log = "+claimEntry("1", "'earlier'")+" WHERE id = $1", id, base); err != nil {
		t.Fatal(err)
	}
}

// latestOf returns the id of thread's latest checkpoint ("" for none).
func latestOf(t *testing.T, q *Queue, thread string) string {
	t.Helper()
	var id string
	if err := q.store.Pool().QueryRow(context.Background(), "SELECT COALESCE((SELECT id FROM "+q.t("ilmek_checkpoints")+
		" WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1), '')", thread).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// runUntilEnded runs a worker on q with graphs until request id ends, and
// returns its outcome.
func runUntilEnded(t *testing.T, q *Queue, graphs map[string]Runnable, id int64) Outcome {
	t.Helper()
	o, err := runUntil(t, q, graphs, id)
	if err != nil {
		t.Fatalf("request %d: %v", id, err)
	}
	return o
}

// runUntil is runUntilEnded returning Wait's error (after 10 s).
func runUntil(t *testing.T, q *Queue, graphs map[string]Runnable, id int64) (Outcome, error) {
	t.Helper()
	ctx := context.Background()
	wctx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		NewWorker(q, graphs, Poll(10*time.Millisecond)).Run(wctx)
	}()
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	o, err := q.Wait(waitCtx, id, 10*time.Millisecond)
	stop()
	<-stopped
	return o, err
}

// logOf returns the log channel of an outcome's result.
func logOf(t *testing.T, o Outcome) []string {
	t.Helper()
	var st struct{ Log []string }
	if err := json.Unmarshal(o.Result, &st); err != nil {
		t.Fatalf("outcome %+v: %v", o, err)
	}
	return st.Log
}

// runRunID is the run option that gives a run the id id.
func runRunID(id string) runtime.RunOption { return queuehook.RunID(id).(runtime.RunOption) }

// onDecided sets testHookClaimDecided for the test: fn is called with the
// number of the decision (from 1) and its mode.
func onDecided(t *testing.T, fn func(n int, m runMode)) *[]runMode {
	var decided []runMode
	testHookClaimDecided = func(m runMode) {
		decided = append(decided, m)
		fn(len(decided), m)
	}
	t.Cleanup(func() { testHookClaimDecided = nil })
	return &decided
}

// endEarlierAt sets testHookClaimDecided for the test so that, at the
// claims' decision number n, the earlier run (waiting on gate) goes on
// and ends (its error on earlier) before the claim's run takes the
// thread. It returns the decisions' modes.
func endEarlierAt(t *testing.T, n int, gate chan struct{}, earlier <-chan error) *[]runMode {
	return onDecided(t, func(i int, _ runMode) {
		if i == n {
			close(gate)
			if err := <-earlier; err != nil {
				t.Errorf("the earlier run: %v", err)
			}
		}
	})
}

// pairGraph is the graph "pair": __start__ -> a -> b, each node appending
// its name to channel "log" once its hook (nil: none) returns nil; a
// hook's error fails the node.
func pairGraph(t *testing.T, a, b func(*runtime.Ctx) error) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	node := func(name string, hook func(*runtime.Ctx) error) runtime.NodeFunc {
		return func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if hook != nil {
				if err := hook(c); err != nil {
					return nil, err
				}
			}
			return runtime.Values{"log": name}, nil
		}
	}
	g, err := runtime.NewBuilder("pair").Channel("log", spec.Append).Node("a", node("a", a)).Node("b", node("b", b)).
		Edge(spec.Start, "a").Edge("a", "b").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// gated returns a gate and a function for a node that, while the gate is
// shut, tells entered it is in and waits for the gate.
func gated() (gate chan struct{}, entered chan struct{}, wait func(ctx context.Context) error) {
	gate, entered = make(chan struct{}), make(chan struct{}, 1)
	return gate, entered, func(ctx context.Context) error {
		select {
		case <-gate:
			return nil
		default:
		}
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TestResumeAfterEarlierRunAnswered: a resume request whose earlier
// claim's run (its worker alive, its lease held) has answered the
// question but not yet committed is claimed again; the claim reads the
// thread as it was, still asking. The earlier run then ends, asking the
// same question again (a loop), before the new claim's run takes the
// lease. That run used to answer the new question with the request's
// answers: one request, two answers in the thread. Now it is refused as
// moved, and the next claim records the earlier run's outcome.
func TestResumeAfterEarlierRunAnswered(t *testing.T) {
	q := openInternalQueue(t, "resumeearlier")
	ctx := context.Background()
	gate, entered, wait := gated()
	g, err := runtime.NewBuilder("loop").Channel("log", spec.Append).
		Node("ask", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			a, err := runtime.Interrupt[string](c, "next?")
			if err != nil {
				return nil, err
			}
			if err := wait(c); err != nil {
				return nil, err
			}
			return runtime.Values{"log": a}, nil
		}).
		Edge(spec.Start, "ask").Edge("ask", "ask").Compile()
	if err != nil {
		t.Fatal(err)
	}
	th := g.Thread(q.store, "t")
	if res, err := th.Invoke(ctx, runtime.Values{}); err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("the first run: %v, %v; want interrupted", res.Status, err)
	}
	asking := latestOf(t, q, "t")
	answers := map[string]any{"ask:interrupt#0": "x"}
	raw, _ := json.Marshal(answers)
	id, err := q.Submit(ctx, Request{Graph: "loop", Thread: "t", Kind: KindResume, Input: raw})
	if err != nil {
		t.Fatal(err)
	}
	expireFirstClaim(t, q, id, asking)
	earlier := make(chan error, 1)
	go func() {
		_, err := th.Resume(ctx, runtime.AnswersByID(answers), runtime.WithEventLog(), runRunID("earlier"))
		earlier <- err
	}()
	<-entered // answered, nothing committed: the thread's latest is still the question

	decided := endEarlierAt(t, 1, gate, earlier)
	o := runUntilEnded(t, q, map[string]Runnable{"loop": Graph(g)}, id)
	if log := logOf(t, o); o.State != "interrupted" || !slices.Equal(log, []string{"x"}) {
		t.Fatalf("request ended %s with log %v, want interrupted with [x] (claims decided %v)", o.State, log, *decided)
	}
	if (*decided)[0] != modeResume {
		t.Fatalf("claims decided %v, want the first to resume", *decided)
	}
}

// TestForkAfterEarlierRunForked: a fork request whose earlier claim's run
// (its worker alive, its lease held) is running its branch, with nothing
// committed yet, is claimed again; the claim reads the thread as it was.
// The earlier run then ends its branch before the new claim's run takes
// the lease. That run used to fork again, from the same checkpoint: one
// request, two branches, the branch's node run twice. Now it is refused
// as moved, and the next claim records the earlier run's outcome.
func TestForkAfterEarlierRunForked(t *testing.T) {
	q := openInternalQueue(t, "forkearlier")
	ctx := context.Background()
	gate, entered, wait := gated()
	var armed atomic.Bool
	var bRuns atomic.Int32
	g := pairGraph(t, nil, func(c *runtime.Ctx) error {
		bRuns.Add(1)
		if armed.Load() {
			return wait(c)
		}
		return nil
	})
	th := g.Thread(q.store, "t")
	if _, err := th.Invoke(ctx, runtime.Values{}); err != nil {
		t.Fatal(err)
	}
	var afterA string // the checkpoint planning b
	if err := q.store.Pool().QueryRow(ctx, "SELECT id FROM "+q.t("ilmek_checkpoints")+" WHERE thread_id = 't' ORDER BY seq LIMIT 1 OFFSET 1").Scan(&afterA); err != nil {
		t.Fatal(err)
	}
	id, err := q.Submit(ctx, Request{Graph: "pair", Thread: "t", From: afterA, Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	expireFirstClaim(t, q, id, latestOf(t, q, "t"))
	armed.Store(true)
	earlier := make(chan error, 1)
	go func() {
		_, err := th.Fork(afterA).Invoke(ctx, runtime.Values{}, runtime.WithEventLog(), runRunID("earlier"),
			queuehook.KeepFirst.(runtime.RunOption))
		earlier <- err
	}()
	<-entered // the branch's b runs, nothing committed

	decided := endEarlierAt(t, 1, gate, earlier)
	o := runUntilEnded(t, q, map[string]Runnable{"pair": Graph(g)}, id)
	if log := logOf(t, o); o.State != "done" || !slices.Equal(log, []string{"a", "b"}) {
		t.Fatalf("request ended %s with log %v, want done with [a b] (claims decided %v)", o.State, log, *decided)
	}
	if n := bRuns.Load(); n != 2 {
		t.Fatalf("b ran %d times, want 2: the thread's first run and the fork's (claims decided %v)", n, *decided)
	}
}

// TestWakeAfterEarlierRunWoke: a wake request whose earlier claim's run
// (its worker alive, its lease held) has woken the thread, and not yet
// committed, is claimed again; the claim reads the thread as it was. The
// earlier run then parks the thread on its next timer, not due yet,
// before the new claim's run takes the lease, which finds nothing due.
// The request used to end cancelled, its timer reported dropped, though
// the earlier run had woken the thread and parked it again. Now the
// claim looks at the thread as it is and records the earlier run's
// outcome.
func TestWakeAfterEarlierRunWoke(t *testing.T) {
	q := openInternalQueue(t, "wakeearlier")
	ctx := context.Background()
	gate, entered, wait := gated()
	var armed atomic.Bool
	g, err := runtime.NewBuilder("nap").Channel("log", spec.Append).
		Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(c, "nap", 50*time.Millisecond); err != nil {
				return nil, err
			}
			if armed.Load() {
				if err := wait(c); err != nil {
					return nil, err
				}
			}
			if err := runtime.Sleep(c, "long", time.Hour); err != nil {
				return nil, err
			}
			return runtime.Values{"log": "woke"}, nil
		}).
		Edge(spec.Start, "n").Compile()
	if err != nil {
		t.Fatal(err)
	}
	park := runtime.WithParkAfter(time.Millisecond)
	th := g.Thread(q.store, "t")
	if res, err := th.Invoke(ctx, runtime.Values{}, park); err != nil || res.Status != runtime.StatusParked {
		t.Fatalf("the first run: %v, %v; want parked", res.Status, err)
	}
	time.Sleep(100 * time.Millisecond) // the nap is due
	var id int64
	if err := q.store.Pool().QueryRow(ctx, "INSERT INTO "+q.t("ilmek_requests")+" (thread_id, graph, kind, policy) VALUES ('t', 'nap', 'wake', 'enqueue') RETURNING id").Scan(&id); err != nil {
		t.Fatal(err)
	}
	expireFirstClaim(t, q, id, latestOf(t, q, "t"))
	armed.Store(true)
	earlier := make(chan error, 1)
	go func() {
		_, err := th.Wake(ctx, runtime.WithEventLog(), runRunID("earlier"), park)
		earlier <- err
	}()
	<-entered // woken, nothing committed

	decided := endEarlierAt(t, 1, gate, earlier)
	o := runUntilEnded(t, q, map[string]Runnable{"nap": Graph(g, park)}, id)
	if o.State != string(runtime.StatusParked) || len(o.Pending) != 1 || o.Pending[0].WakeAt.Before(time.Now().Add(time.Minute)) {
		t.Fatalf("request ended %s (%s) pending %+v, want parked on the hour's timer (claims decided %v)", o.State, o.Error, o.Pending, *decided)
	}
}

// TestClaimRetryKeepsTheBase: a claim whose reply was lost is found again
// by its retry, which cannot see the request's base (base_cp) as it was
// before the lost attempt set it. The retry used to take a base equal to
// the thread's latest checkpoint for one the lost attempt set, that is
// for the request's first claim, although an earlier claim had set it;
// when the claim's run was then refused (an earlier claim's run, its
// worker alive, held the thread), the request went back to the queue with
// no base, and once that earlier run had folded the input in, the next
// claim took the thread as the request's starting point and folded the
// input in again. Now the claim notes in its claims log entry whether it
// set the base, and the retry reads that.
func TestClaimRetryKeepsTheBase(t *testing.T) {
	q := openInternalQueue(t, "claimretrybase")
	ctx := context.Background()
	gate, entered, wait := gated()
	var armed atomic.Bool
	g := pairGraph(t, func(c *runtime.Ctx) error {
		if armed.Load() {
			return wait(c)
		}
		return nil
	}, nil)
	th := g.Thread(q.store, "t")
	if _, err := th.Invoke(ctx, runtime.Values{}); err != nil {
		t.Fatal(err)
	}
	id, err := q.Submit(ctx, Request{Graph: "pair", Thread: "t", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	expireFirstClaim(t, q, id, latestOf(t, q, "t"))
	armed.Store(true)
	earlier := make(chan error, 1)
	go func() {
		_, err := th.Invoke(ctx, runtime.Values{}, runtime.WithEventLog(), runRunID("earlier"),
			queuehook.KeepFirst.(runtime.RunOption))
		earlier <- err
	}()
	<-entered // the earlier run holds the thread, nothing committed

	var lost atomic.Bool
	testHookClaimReply = func(attempt int) error {
		if attempt == 1 && lost.CompareAndSwap(false, true) {
			return io.ErrUnexpectedEOF // the first claim's reply is lost
		}
		return nil
	}
	t.Cleanup(func() { testHookClaimReply = nil })
	// The first claim (the retried one) is refused: the earlier run holds
	// the thread. Before the second claim's run, it ends.
	decided := endEarlierAt(t, 2, gate, earlier)
	o := runUntilEnded(t, q, map[string]Runnable{"pair": Graph(g)}, id)
	if log := logOf(t, o); o.State != "done" || !slices.Equal(log, []string{"a", "b", "a", "b"}) {
		t.Fatalf("request ended %s with log %v, want done with [a b a b] (claims decided %v)", o.State, log, *decided)
	}
	if !lost.Load() {
		t.Fatal("no claim's reply was lost")
	}
}

// TestNodeErrorNamingBusyIsNoRefusal: a run whose node fails with an
// error that wraps runtime.ErrThreadBusy (the node drove another thread,
// which was busy) has run: it committed its first superstep and ended in
// error. The worker used to take it for a run refused before it wrote
// anything and gave the request back as such, with the base and the runs
// it had before: every next claim folded the input in again, ran the
// first node again, and was given back again, without end. Now the
// request ends in error after its one run.
func TestNodeErrorNamingBusyIsNoRefusal(t *testing.T) {
	for name, refusal := range map[string]error{"busy": runtime.ErrThreadBusy, "moved": runtime.ErrThreadMoved} {
		t.Run(name, func(t *testing.T) {
			q := openInternalQueue(t, "nodebusy")
			ctx := context.Background()
			var aRuns atomic.Int32
			g := pairGraph(t, func(*runtime.Ctx) error { aRuns.Add(1); return nil },
				func(*runtime.Ctx) error { return fmt.Errorf("drive the inner thread: %w", refusal) })
			id, err := q.Submit(ctx, Request{Graph: "pair", Thread: "t", Input: json.RawMessage(`{"log": "in"}`)})
			if err != nil {
				t.Fatal(err)
			}
			o, err := runUntil(t, q, map[string]Runnable{"pair": Graph(g)}, id)
			if err != nil {
				o, _ := q.Outcome(ctx, id)
				st, _ := g.Thread(q.store, "t").State(ctx)
				t.Fatalf("request %d: %v: %s after %d claims; the thread's log %v, a ran %d times", id, err, o.State, o.Claims, st.State["log"], aRuns.Load())
			}
			if log := logOf(t, o); o.State != "error" || !strings.Contains(o.Error, "drive the inner thread") || o.Claims != 1 || len(o.Runs) != 1 || !slices.Equal(log, []string{"in", "a"}) {
				t.Fatalf("request ended %s (%s) with log %v after %d claims, runs %v; want error, the node's, with [in a] after one claim and its run", o.State, o.Error, log, o.Claims, o.Runs)
			}
			if n := aRuns.Load(); n != 1 {
				t.Fatalf("a ran %d times, want once", n)
			}
		})
	}
}

// TestCancelAfterEarlierClaim: a request cancelled while running, whose
// worker died or stalled past its claim, is claimed again with its cancel
// set. That claim used to end it aborted, "cancelled before it ran", at
// once, whatever the earlier claim's run had done: one that had ended the
// thread before the cancel reached it (its worker died before recording
// it) left a request aborted on a thread that was done, and one still
// running (its worker alive, its lease held) went on to end the thread
// after the request was recorded aborted. Now the claim waits for the
// thread's lease and records the thread as it is.
func TestCancelAfterEarlierClaim(t *testing.T) {
	for _, tc := range []struct {
		name    string
		earlier string // what the earlier claim's run did: "", "ended", "failed", "holds"
		state   string
		errPart string
		log     []string
	}{
		{"no earlier run wrote", "", "aborted", "cancelled before it ran", nil},
		{"the earlier run ended the thread", "ended", "done", "", []string{"a", "b"}},
		{"the earlier run stopped midway", "failed", "aborted", "earlier claim's run had begun it", nil},
		{"the earlier run still holds the thread", "holds", "done", "", []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := openInternalQueue(t, "cancelearlier")
			ctx := context.Background()
			gate, entered, wait := gated()
			g := pairGraph(t, nil, func(c *runtime.Ctx) error {
				switch tc.earlier {
				case "failed":
					return errors.New("the earlier run's node failed")
				case "holds":
					return wait(c)
				}
				return nil
			})
			id, err := q.Submit(ctx, Request{Graph: "pair", Thread: "t", Input: json.RawMessage(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			expireFirstClaim(t, q, id, "")
			earlier := make(chan error, 1)
			if tc.earlier != "" {
				go func() {
					_, err := g.Thread(q.store, "t").Invoke(ctx, runtime.Values{}, runtime.WithEventLog(), runRunID("earlier"))
					earlier <- err
				}()
				if tc.earlier == "holds" {
					<-entered
					go func() {
						// Once a claim has found the thread held, the
						// earlier run goes on to its end.
						for {
							var claims int64
							if err := q.store.Pool().QueryRow(ctx, "SELECT claim FROM "+q.t("ilmek_requests")+" WHERE id = $1", id).Scan(&claims); err != nil || claims >= 2 {
								break
							}
							time.Sleep(5 * time.Millisecond)
						}
						close(gate)
					}()
				} else if err := <-earlier; err != nil && tc.earlier != "failed" {
					t.Fatalf("the earlier run: %v", err)
				}
			}
			if _, err := q.Cancel(ctx, "t"); err != nil {
				t.Fatal(err)
			}
			o := runUntilEnded(t, q, map[string]Runnable{"pair": Graph(g)}, id)
			var log []string
			if len(o.Result) > 0 {
				log = logOf(t, o)
			}
			if o.State != tc.state || !strings.Contains(o.Error, tc.errPart) || !slices.Equal(log, tc.log) {
				t.Fatalf("request ended %s (%q) with log %v, want %s (%q) with %v", o.State, o.Error, log, tc.state, tc.errPart, tc.log)
			}
			if tc.earlier == "holds" {
				if err := <-earlier; err != nil {
					t.Fatalf("the earlier run: %v", err)
				}
			}
		})
	}
}
