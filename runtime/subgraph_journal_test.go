package runtime_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestSubgraphParallelStepsShareJournalWrites runs a child superstep of
// three parallel tasks, each with a Step, inside a subgraph node. The
// three write one journal, their parent task's: the store holds the first
// write until all three effects have returned, and the two Steps that
// finished while it was in flight must be written together by the next
// write, not one after the other (three writes). Every Step still returns
// only after a write holding its entry succeeded, and the run ends with
// each step's value.
func TestSubgraphParallelStepsShareJournalWrites(t *testing.T) {
	const n = 3
	var ran sync.WaitGroup
	ran.Add(n)
	child := runtime.NewBuilder("fan")
	for i := range n {
		id := "c" + strconv.Itoa(i)
		child.Channel(id, spec.LastWrite)
		child.Node(id, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			v, err := runtime.Step(ctx, "effect", func() (int, error) { ran.Done(); return i + 10, nil })
			if err != nil {
				return nil, err
			}
			return runtime.Values{id: v}, nil
		})
		child.Edge(spec.Start, id)
	}
	fan := mustCompile(t, child)
	parent := runtime.NewBuilder("top")
	out := map[string]string{}
	for i := range n {
		id := "c" + strconv.Itoa(i)
		parent.Channel(id, spec.LastWrite)
		out[id] = id
	}
	g := mustCompile(t, parent.Subgraph("sub", fan, nil, out).Edge(spec.Start, "sub").Edge("sub", spec.End))

	f := newFaultyStore()
	var mu sync.Mutex
	var steps []int // entries of Steps in each write of the subgraph task's journal
	held := false
	f.failPutJournal = func(_ int, taskID string, entries []checkpoint.JournalEntry) error {
		k := 0
		for _, e := range entries {
			if strings.HasSuffix(e.Key, "/effect#0") {
				k++
			}
		}
		mu.Lock()
		steps = append(steps, k)
		first := k == 1 && !held
		held = held || first
		mu.Unlock()
		if first {
			// Hold the first Step's write until every effect returned,
			// and a moment more for their Steps to ask for a write.
			done := make(chan struct{})
			go func() { ran.Wait(); close(done) }()
			select {
			case <-done:
				time.Sleep(50 * time.Millisecond)
			case <-time.After(2 * time.Second):
			}
		}
		return nil
	}
	res, err := g.Thread(f, "t").Invoke(context.Background(), runtime.Values{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runtime.StatusDone {
		t.Fatalf("run ended %s, want done", res.Status)
	}
	for i := range n {
		id := "c" + strconv.Itoa(i)
		if got := res.State[id]; got != float64(i+10) {
			t.Errorf("channel %s = %v (%T), want %d", id, got, got, i+10)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	writes := 0 // the writes until one held all n Steps
	for _, k := range steps {
		if k > 0 {
			writes++
		}
		if k == n {
			break
		}
	}
	if writes != 2 {
		t.Errorf("the %d Steps took %d journal writes (Steps per write: %v), want 2: the first, and one for the Steps that finished while it was in flight", n, writes, steps)
	}
	f.checkReleased(t)
}
