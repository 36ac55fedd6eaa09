package workers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

// timeoutError is a net.Error that timed out, as an HTTP client's is.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// claimsLog reads request id's claims log.
func claimsLog(t *testing.T, q *workers.Queue, id int64) []workers.Claim {
	t.Helper()
	var raw []byte
	if err := q.Store().Pool().QueryRow(context.Background(), "SELECT claims_log FROM "+q.Store().SchemaName()+".ilmek_requests WHERE id = $1", id).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var log []workers.Claim
	if err := json.Unmarshal(raw, &log); err != nil {
		t.Fatal(err)
	}
	return log
}

// TestNodeTransientErrorEndsTheRequest: a node whose API call keeps timing
// out (a net.Error, wrapped with %w) is given back to the queue with a
// pause that doubles while its runs get nowhere, and past TransientRetries
// such claims in a row its error ends the request. The worker used to give
// it back every 200 ms without end, calling the API each time.
func TestNodeTransientErrorEndsTheRequest(t *testing.T) {
	q := openQueue(t)
	var calls atomic.Int32
	g, err := runtime.NewBuilder("caller").Channel("log", spec.Append).
		Node("call", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			calls.Add(1)
			return nil, fmt.Errorf("call the pricing API: %w", timeoutError{})
		}).Edge(spec.Start, "call").Compile()
	if err != nil {
		t.Fatal(err)
	}
	startWorkers(t, q, map[string]workers.Runnable{"caller": workers.Graph(g)}, 1, workers.TransientRetries(3))
	id, err := q.Submit(context.Background(), workers.Request{Graph: "caller", Thread: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o, err := q.Wait(ctx, id, 10*time.Millisecond)
	if err != nil {
		o, _ := q.Outcome(context.Background(), id)
		t.Fatalf("request %d: %v: %s after %d claims, the node called %d times", id, err, o.State, o.Claims, calls.Load())
	}
	// Three claims got nowhere and were given back; the fourth is past
	// the limit.
	if o.State != "error" || !strings.Contains(o.Error, "i/o timeout") || o.Claims != 4 || calls.Load() != 4 {
		t.Fatalf("request ended %s (%q) after %d claims, the node called %d times; want error, the node's, after 4", o.State, o.Error, o.Claims, calls.Load())
	}
	log := claimsLog(t, q, id)
	if len(log) != 4 {
		t.Fatalf("claims log %+v: want 4 entries", log)
	}
	for i, e := range log[:3] {
		if !e.Released || !e.Stuck || !strings.Contains(e.Error, "i/o timeout") {
			t.Errorf("claim %d: %+v; want released and stuck, with the node's error", i+1, e)
		}
	}
	if log[3].Released || log[3].Stuck {
		t.Errorf("last claim %+v: want neither released nor stuck: it ended the request", log[3])
	}
	// The pauses double: 200, 400 and 800 ms (at least; a claim comes at
	// the worker's next poll).
	for i, want := range []time.Duration{200, 400, 800} {
		if gap := log[i+1].At.Sub(log[i].At); gap < want*time.Millisecond {
			t.Errorf("claim %d came %v after claim %d; want at least %v", i+2, gap, i+1, want*time.Millisecond)
		}
	}
}

// TestNodeTransientErrorsWithProgress: a run that writes a checkpoint
// before its node's transient error starts the count again, so a request
// whose every claim gets a step further runs to its end whatever the
// limit; and a node that fails transiently fewer times than the limit
// ends done.
func TestNodeTransientErrorsWithProgress(t *testing.T) {
	q := openQueue(t)
	var mu sync.Mutex
	failed := map[string]int{}
	// Each node fails its first `times` calls with a timeout.
	node := func(name string, times int) runtime.NodeFunc {
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			mu.Lock()
			defer mu.Unlock()
			if failed[name] < times {
				failed[name]++
				return nil, fmt.Errorf("node %s: %w", name, timeoutError{})
			}
			return runtime.Values{"log": []any{name}}, nil
		}
	}
	b := runtime.NewBuilder("steps").Channel("log", spec.Append)
	prev := spec.Start
	for i := range 5 {
		name := fmt.Sprintf("n%d", i)
		b = b.Node(name, node(name, 1)).Edge(prev, name)
		prev = name
	}
	steps, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	flaky, err := runtime.NewBuilder("flaky").Channel("log", spec.Append).
		Node("call", node("call", 1)).Edge(spec.Start, "call").Compile()
	if err != nil {
		t.Fatal(err)
	}
	startWorkers(t, q, map[string]workers.Runnable{"steps": workers.Graph(steps), "flaky": workers.Graph(flaky)}, 1, workers.TransientRetries(1))
	for _, tc := range []struct {
		graph  string
		claims int64
	}{
		{"steps", 6}, // five failures, each but the first after a step further
		{"flaky", 2}, // one stuck claim, within the limit
	} {
		id, err := q.Submit(context.Background(), workers.Request{Graph: tc.graph, Thread: tc.graph})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		o, err := q.Wait(ctx, id, 10*time.Millisecond)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", tc.graph, err)
		}
		if o.State != "done" || o.Claims != tc.claims {
			t.Errorf("%s: ended %s (%q) after %d claims; want done after %d", tc.graph, o.State, o.Error, o.Claims, tc.claims)
		}
	}
}

// TestBusyClaimBetweenStuckClaims: a claim refused because another
// process's run held the thread comes between two stuck claims without
// breaking their row: the request ends after TransientRetries stuck
// claims, as it would without the refusal. The refusal used to start the
// count again, so a thread other runs kept busy could be given back
// without end.
func TestBusyClaimBetweenStuckClaims(t *testing.T) {
	q := openQueue(t)
	other, err := postgres.Open(context.Background(), pgtest.DSN(t), postgres.Schema(q.Store().SchemaName()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	var calls atomic.Int32
	held := make(chan checkpoint.Lease, 1)
	g, err := runtime.NewBuilder("caller").Channel("log", spec.Append).
		Node("call", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			if calls.Add(1) == 1 {
				// Another process takes the thread as soon as this run
				// gives it back, before the request's next claim.
				go func() {
					for {
						l, err := other.Lease(context.Background(), "t", checkpoint.LeaseOptions{})
						if err == nil {
							held <- l
							return
						}
						time.Sleep(time.Millisecond)
					}
				}()
			}
			return nil, fmt.Errorf("call the pricing API: %w", timeoutError{})
		}).Edge(spec.Start, "call").Compile()
	if err != nil {
		t.Fatal(err)
	}
	startWorkers(t, q, map[string]workers.Runnable{"caller": workers.Graph(g)}, 1, workers.TransientRetries(2))
	id, err := q.Submit(context.Background(), workers.Request{Graph: "caller", Thread: "t"})
	if err != nil {
		t.Fatal(err)
	}
	lease := <-held
	deadline := time.Now().Add(10 * time.Second)
	for refused := false; !refused; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no claim was refused while the thread was held: %+v", claimsLog(t, q, id))
		}
		for _, e := range claimsLog(t, q, id) {
			refused = refused || e.Refused
		}
	}
	lease.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o, err := q.Wait(ctx, id, 10*time.Millisecond)
	if err != nil {
		t.Fatalf("request %d: %v; claims %+v", id, err, claimsLog(t, q, id))
	}
	// Two stuck claims (one before the refusals, one after), then the
	// third call is past the limit.
	if o.State != "error" || calls.Load() != 3 {
		t.Errorf("request ended %s after the node was called %d times; want error after 3; claims %+v", o.State, calls.Load(), claimsLog(t, q, id))
	}
}
