package sqlite_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/leaktest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// TestLostLeaseCancelsTheRun: while a node runs, another process's Store
// deletes the thread, so the running Store loses its lease. The heartbeat
// notices within a third of the TTL and the run is cancelled at once: the
// node sees its context done, the step it then asks for is not run (the
// thread's new owner would run it again), and the run ends with StatusError
// and a lease CheckpointError wrapping ErrLeaseLost, long before the node's
// own deadline.
func TestLostLeaseCancelsTheRun(t *testing.T) {
	leaktest.Check(t)
	const ttl = 300 * time.Millisecond
	s, path := open(t, sqlite.LeaseTTL(ttl))
	other, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })

	started := make(chan struct{})
	var charges atomic.Int64
	g, err := runtime.NewBuilder("lost").Channel("paid", "").
		Node("charge", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			close(started)
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Second):
				return nil, errors.New("the run was not cancelled after its lease was lost")
			}
			if _, err := runtime.Step(ctx, "charge", func() (int, error) { charges.Add(1); return 1, nil }); err != nil {
				return nil, err
			}
			return runtime.Values{"paid": true}, nil
		}).
		Edge(spec.Start, "charge").Compile()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-started
		if err := other.DeleteThread(context.Background(), "t"); err != nil {
			t.Error(err)
		}
	}()
	begin := time.Now()
	res, err := g.Thread(s, "t").Invoke(context.Background(), nil)
	took := time.Since(begin)
	var ce *runtime.CheckpointError
	if res.Status != runtime.StatusError || !errors.As(err, &ce) || ce.Op != "lease" || !errors.Is(err, sqlite.ErrLeaseLost) {
		t.Fatalf("status %q, err %v; want status error with a lease CheckpointError wrapping ErrLeaseLost", res.Status, err)
	}
	if n := charges.Load(); n != 0 {
		t.Errorf("the step ran %d times after the lease was lost", n)
	}
	if took > 10*ttl {
		t.Errorf("the run took %v to stop after its lease was lost (TTL %v)", took, ttl)
	}
}
