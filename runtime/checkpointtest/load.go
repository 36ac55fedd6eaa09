package checkpointtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var loadContracts = []contract{
	{"ConcurrentUse", testConcurrent},
	{"ThousandsOfThreads", testManyThreads},
}

// testConcurrent drives every operation from many goroutines at once: each
// owns a thread (checkpoint chain, journals, lease) and all of them also
// append to one shared thread and read each other's.
func testConcurrent(t *testing.T, cp runtime.Checkpointer) {
	ctx := t.Context()
	const workers, rounds = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(err error) { errs <- fmt.Errorf("worker %d: %w", w, err) }
			thread := fmt.Sprintf("worker-%d", w)
			release, err := leaseFunc(cp.Lease(ctx, thread, checkpoint.LeaseOptions{}))
			if err != nil {
				fail(err)
				return
			}
			defer release()
			prev := ""
			for i := range rounds {
				task := fmt.Sprintf("p%d:task", i)
				if err := cp.PutJournal(ctx, thread, task, journal(task, 2)); err != nil {
					fail(err)
					return
				}
				c := mk(thread, prev, i)
				if err := cp.Put(ctx, c, []string{task}); err != nil {
					fail(err)
					return
				}
				prev = c.ID
				got, err := cp.Get(ctx, thread, "")
				switch {
				case err != nil:
					fail(err)
					return
				case got.ID != c.ID:
					fail(fmt.Errorf("latest of %s = %s right after Put of %s", thread, got.ID, c.ID))
					return
				}
				if j, err := cp.GetJournal(ctx, thread, task); err != nil || len(j) != 0 {
					fail(fmt.Errorf("journal %s after its Put: %v %v", task, j, err))
					return
				}
				if err := cp.Put(ctx, mk("shared", "", w*rounds+i), nil); err != nil {
					fail(err)
					return
				}
				other := fmt.Sprintf("worker-%d", (w+1)%workers)
				if _, err := cp.Get(ctx, other, ""); err != nil && !errors.Is(err, runtime.ErrNotFound) {
					fail(err)
					return
				}
				if _, err := cp.List(ctx, "shared", 3); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for w := range workers {
		if got := list(t, cp, fmt.Sprintf("worker-%d", w), 0); len(got) != rounds {
			t.Errorf("worker-%d has %d checkpoints, want %d", w, len(got), rounds)
		}
	}
	shared, err := cp.List(ctx, "shared", 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range shared {
		var ch struct{ N int }
		if err := json.Unmarshal(c.Channels, &ch); err != nil {
			t.Fatal(err)
		}
		seen[fmt.Sprint(ch.N)] = true
	}
	if len(shared) != workers*rounds || len(seen) != workers*rounds {
		t.Errorf("shared thread has %d checkpoints (%d distinct), want %d", len(shared), len(seen), workers*rounds)
	}
}

// testManyThreads stores a checkpoint and a journal for thousands of threads
// and reads every one back.
func testManyThreads(t *testing.T, cp runtime.Checkpointer) {
	const threads = 2000
	want := make([]*runtime.Checkpoint, threads)
	for i := range threads {
		thread := fmt.Sprintf("thread-%05d", i)
		want[i] = put(t, cp, mk(thread, "", i))
		if i%10 == 0 {
			putJournal(t, cp, thread, "task", journal(thread, 1))
		}
	}
	for i := range threads {
		thread := fmt.Sprintf("thread-%05d", i)
		sameCheckpoint(t, want[i], get(t, cp, thread, ""))
		switch i % 10 {
		case 0:
			sameJournal(t, "journal of "+thread, journal(thread, 1), getJournal(t, cp, thread, "task"))
		case 1:
			if j := getJournal(t, cp, thread, "task"); len(j) != 0 {
				t.Fatalf("%s has a journal it never wrote: %+v", thread, j)
			}
		}
		if t.Failed() {
			return
		}
	}
}
