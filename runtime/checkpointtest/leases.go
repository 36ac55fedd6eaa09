package checkpointtest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var leaseContracts = []contract{
	{"LeaseIsExclusive", testLeaseExclusive},
	{"LeaseUnderContention", testLeaseContention},
}

func lease(t *testing.T, cp runtime.Checkpointer, thread string) func() {
	t.Helper()
	release, err := leaseFunc(cp.Lease(t.Context(), thread, checkpoint.LeaseOptions{}))
	if err != nil {
		t.Fatalf("Lease(%q): %v", thread, err)
	}
	return release
}

func busy(t *testing.T, cp runtime.Checkpointer, thread, when string) {
	t.Helper()
	start := time.Now()
	release, err := leaseFunc(cp.Lease(t.Context(), thread, checkpoint.LeaseOptions{}))
	if !errors.Is(err, runtime.ErrThreadBusy) {
		if release != nil {
			release()
		}
		t.Fatalf("Lease(%q) %s: err %v, want ErrThreadBusy", thread, when, err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("Lease(%q) %s took %v to refuse; it must fail fast", thread, when, el)
	}
}

func testLeaseExclusive(t *testing.T, cp runtime.Checkpointer) {
	r1 := lease(t, cp, "t")
	busy(t, cp, "t", "while it is held")
	busy(t, cp, "t", "a second time while it is held")
	other := lease(t, cp, "u") // other threads are independent
	r1()
	r2 := lease(t, cp, "t")
	r1() // a second release of the first lease must not free the second
	busy(t, cp, "t", "after the first lease was released twice and a new one taken")
	r2()
	r2()
	r3 := lease(t, cp, "t")
	busy(t, cp, "u", "while held, with other leases released")
	other()
	r3()
	lease(t, cp, "u")()
}

// testLeaseContention lets goroutines race for one thread's lease; at most
// one may ever hold it.
func testLeaseContention(t *testing.T, cp runtime.Checkpointer) {
	const workers, wins = 8, 40
	var inside, overlaps, won atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	deadline := time.Now().Add(20 * time.Second)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for won.Load() < wins && time.Now().Before(deadline) {
				release, err := leaseFunc(cp.Lease(t.Context(), "hot", checkpoint.LeaseOptions{}))
				if errors.Is(err, runtime.ErrThreadBusy) {
					time.Sleep(50 * time.Microsecond)
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				if inside.Add(1) > 1 {
					overlaps.Add(1)
				}
				won.Add(1)
				time.Sleep(100 * time.Microsecond)
				inside.Add(-1)
				release()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Lease under contention: %v", err)
	}
	if overlaps.Load() != 0 {
		t.Errorf("%d times two goroutines held the lease of one thread at once", overlaps.Load())
	}
	if won.Load() < wins {
		t.Errorf("only %d leases were won in 20 s, want %d (a released lease must be free again)", won.Load(), wins)
	}
}

// leaseFunc adapts a Lease to the func() its callers release it with.
func leaseFunc(l checkpoint.Lease, err error) (func(), error) {
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}
