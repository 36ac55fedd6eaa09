package waker_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/waker"
	"github.com/ilmek-go/ilmek/spec"
)

// abortedLister records the waker's listings of aborted threads: the
// window each asked for and the threads each got. It is a Memory in
// every other way (its leases, thread records and events).
type abortedLister struct {
	*checkpoint.Memory
	mu       sync.Mutex
	listings []abortedListing
}

type abortedListing struct {
	windowed bool // UpdatedAfter was set
	threads  []string
}

func (s *abortedLister) ListThreads(ctx context.Context, q checkpoint.ThreadQuery) (checkpoint.ThreadPage, error) {
	page, err := s.Memory.ListThreads(ctx, q)
	if q.Status == runtime.StatusAborted {
		l := abortedListing{windowed: !q.UpdatedAfter.IsZero()}
		for _, th := range page.Threads {
			l.threads = append(l.threads, th.ID)
		}
		s.mu.Lock()
		s.listings = append(s.listings, l)
		s.mu.Unlock()
	}
	return page, err
}

func (s *abortedLister) last() abortedListing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listings[len(s.listings)-1]
}

// TestAbortedListingWindow: a waker lists every aborted thread at its
// first poll and then only those updated since, so a store's cancelled
// runs do not make each poll longer; a poll that finds a thread a
// waker's stop cut short keeps the window where it was (the continuation
// may be refused), and the listing is full again every abortedFullEvery
// (a thread can read aborted again without an update, once a killed
// continuation's lease lapses).
func TestAbortedListingWindow(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	cancels := map[string]context.CancelCauseFunc{}
	ends := 0
	g, err := runtime.NewBuilder("w").Channel("n", "").
		Node("a", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			mu.Lock()
			cancel := cancels[c.ThreadID()]
			delete(cancels, c.ThreadID())
			mu.Unlock()
			if cancel != nil {
				cancel(nil)
				<-c.Done()
				return nil, c.Err()
			}
			return nil, nil
		}).
		Node("b", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			mu.Lock()
			ends++
			mu.Unlock()
			return runtime.Values{"n": 1}, nil
		}).
		Edge(spec.Start, "a").Edge("a", "b").Compile()
	if err != nil {
		t.Fatal(err)
	}
	store := &abortedLister{Memory: checkpoint.NewMemory()}
	// Two aborted threads: "stopped" as a waker's stop aborts a run,
	// "cancelled" as a person's cancel does.
	for thread, cause := range map[string]error{"stopped": waker.ErrStopped, "cancelled": errors.New("cancelled by a person")} {
		rctx, cancel := context.WithCancelCause(ctx)
		mu.Lock()
		cancels[thread] = func(error) { cancel(cause) }
		mu.Unlock()
		if res, _ := g.Thread(store, thread).Invoke(rctx, runtime.Values{}); res.Status != runtime.StatusAborted {
			t.Fatalf("thread %s: %s, want aborted", thread, res.Status)
		}
	}
	for _, c := range []struct {
		name  string
		every time.Duration
		// what the listings of five polls ask for: windowed or not
		windowed []bool
	}{
		{"window", time.Hour, []bool{false, false, true, true, true}},
		{"full every poll", 0, []bool{false, false, false, false, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := waker.New(store, []waker.Target{waker.Graph(g)}, waker.AbortedListing(c.every, 0))
			if err != nil {
				t.Fatal(err)
			}
			var got []bool
			for i := range c.windowed {
				n, err := w.WakeDue(ctx)
				if err != nil {
					t.Fatal(err)
				}
				l := store.last()
				got = append(got, l.windowed)
				if i == 0 && (n > 1 || !slices.Contains(l.threads, "cancelled")) {
					t.Errorf("first poll: %d runs, listed %v; want every aborted thread listed", n, l.threads)
				}
				if l.windowed && slices.Contains(l.threads, "cancelled") {
					t.Errorf("poll %d: windowed, and it listed the thread cancelled before: %v", i+1, l.threads)
				}
			}
			if !slices.Equal(got, c.windowed) {
				t.Errorf("listings windowed %v, want %v (the first full; full again after one that found a thread to continue)", got, c.windowed)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if ends != 1 {
		t.Errorf("node b ran %d times, want once (the stopped thread continued, the cancelled one left)", ends)
	}
	for thread, done := range map[string]bool{"stopped": true, "cancelled": false} {
		cp, err := store.Get(ctx, thread, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := len(cp.Next) == 0; got != done {
			t.Errorf("thread %s: next %v; want it ended %v", thread, cp.Next, done)
		}
	}
}
