package workers_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

// timeoutError is a net.Error that timed out, as an HTTP client's is.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// TestNodeNetworkErrorEndsTheRequest: a node that fails with a network
// error of its own (an API call that timed out) fails the run as any node
// error does: the request ends in error after one claim. The worker used
// to take every error that looked transient for the store's, give the
// request back and claim it again every 200 ms without end, running the
// node each time.
func TestNodeNetworkErrorEndsTheRequest(t *testing.T) {
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
	startWorkers(t, q, map[string]workers.Runnable{"caller": workers.Graph(g)}, 1)
	id, err := q.Submit(context.Background(), workers.Request{Graph: "caller", Thread: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	o, err := q.Wait(ctx, id, 10*time.Millisecond)
	if err != nil {
		o, _ := q.Outcome(context.Background(), id)
		t.Fatalf("request %d: %v: %s after %d claims, the node called %d times", id, err, o.State, o.Claims, calls.Load())
	}
	if o.State != "error" || !strings.Contains(o.Error, "i/o timeout") || o.Claims != 1 || calls.Load() != 1 {
		t.Fatalf("request ended %s (%q) after %d claims, the node called %d times; want error, the node's, after one", o.State, o.Error, o.Claims, calls.Load())
	}
}
