package server

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// scanLog is a memory store that keeps the thread listings that name no
// thread (ThreadQuery.ID) and no owner: the ones a store answers by
// reading every thread's record.
type scanLog struct {
	*checkpoint.Memory
	mu    sync.Mutex
	scans []runtime.ThreadQuery
}

func (s *scanLog) ListThreads(ctx context.Context, q runtime.ThreadQuery) (runtime.ThreadPage, error) {
	if q.ID == "" && q.Meta[metaOwner] == "" {
		s.mu.Lock()
		s.scans = append(s.scans, q)
		s.mu.Unlock()
	}
	return s.Memory.ListThreads(ctx, q)
}

func (s *scanLog) take() []runtime.ThreadQuery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.scans
	s.scans = nil
	return out
}

// TestOneThreadIsReadByItsKey: creating a thread, reading it, running it
// and listing its runs read the thread's record by its id, never by a
// listing of every record. Before, each of them asked for the threads
// whose metadata named the id, which both SQL stores answer by reading
// every thread's record: 40 ms a request on SQLite among 50,000 threads,
// and creating n threads cost O(n²).
func TestOneThreadIsReadByItsKey(t *testing.T) {
	store := &scanLog{Memory: checkpoint.NewMemory()}
	recordThreads(t, store, "bob", 100)
	ts := newTestServer(t, func(c *Config) { c.Checkpointer = store })
	store.take()
	th := ts.newThread("alice", nil)
	ts.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200)
	var run RunView
	ts.must("alice", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "t"}}, 202).json(t, &run)
	ts.wait("alice", run)
	ts.must("alice", "GET", "/threads/"+th.ThreadID+"/runs", nil, 200)
	ts.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200)
	if scans := store.take(); len(scans) != 0 {
		t.Fatalf("reading one thread listed every record %d times, the first %+v", len(scans), scans[0])
	}
}

// BenchmarkThreadRead reads one thread (GET /threads/{id}) on SQLite
// holding n other threads: the store finds its record by its key, so the
// cost does not grow with n.
func BenchmarkThreadRead(b *testing.B) {
	for _, n := range []int{0, 50000} {
		b.Run(fmt.Sprintf("threads=%d", n), func(b *testing.B) {
			store, err := sqlite.Open(b.TempDir() + "/threads.db")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { store.Close() })
			recordThreads(b, store, "bob", n)
			ts := newTestServer(b, func(c *Config) { c.Checkpointer = store })
			th := ts.newThread("alice", nil)
			b.ResetTimer()
			for b.Loop() {
				ts.cache.Clear() // as a server that did not create the thread
				ts.must("alice", "GET", "/threads/"+th.ThreadID, nil, 200)
			}
		})
	}
}
