package checkpointtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// deltaContracts hold for every backend (a backend without PutDelta gets
// full snapshots from the executor), and test PutDelta itself on the
// backends that have it (checkpoint.DeltaCheckpointer).
var deltaContracts = []contract{
	{"DeltaLongThreadReadsBackEveryCheckpoint", testDeltaLongThread},
	{"DeltaForkFromOldCheckpoint", testDeltaFork},
	{"DeltaRunAfterCrashBetweenDeltaWrites", testDeltaCrash},
	{"DeltaCompactionRacesReaders", testDeltaRace},
	{"DeltaUnknownBaseIsNotFound", testDeltaUnknownBase},
	{"DeltaDeleteThreadLeavesNothing", testDeltaDelete},
}

// chatGraph appends one message per superstep to "messages" and records
// their count in "n", so every checkpoint can be checked on its own.
func chatGraph(t *testing.T, fail func(n int) bool) *graph {
	return compile(t, runtime.NewBuilder("chat").Channel("messages", spec.Append).Channel("n", "").
		Node("say", func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			n := countOf(s["messages"])
			if fail != nil && fail(n) {
				return nil, errors.New("the process stops here")
			}
			return runtime.Values{"messages": fmt.Sprintf("message %d with \"quotes\", [brackets] and {braces}", n), "n": n + 1}, nil
		}).
		Edge(spec.Start, "say").Edge("say", spec.End))
}

func countOf(v any) int {
	l, _ := v.([]any)
	return len(l)
}

// checkChat fails t unless the channels of c hold messages 0..n-1 and n.
func checkChat(t *testing.T, c *runtime.Checkpoint) int {
	t.Helper()
	var st struct {
		Messages []string `json:"messages"`
		N        int      `json:"n"`
	}
	if err := json.Unmarshal(c.Channels, &st); err != nil {
		t.Fatalf("checkpoint %s: channels %q do not decode: %v", c.ID, c.Channels, err)
	}
	if len(st.Messages) != st.N {
		t.Fatalf("checkpoint %s holds %d messages but n = %d", c.ID, len(st.Messages), st.N)
	}
	for i, m := range st.Messages {
		if want := fmt.Sprintf("message %d with \"quotes\", [brackets] and {braces}", i); m != want {
			t.Fatalf("checkpoint %s: message %d = %q, want %q", c.ID, i, m, want)
		}
	}
	return st.N
}

// chat runs turns one-superstep runs of g on thread.
func chat(t *testing.T, g *graph, cp runtime.Checkpointer, thread string, turns int) {
	t.Helper()
	for i := 0; i < turns; i++ {
		res, err := g.Thread(cp, thread).Invoke(t.Context(), nil)
		if err != nil || res.Status != runtime.StatusDone {
			t.Fatalf("turn %d: %s %v", i, res.Status, err)
		}
	}
}

func testDeltaLongThread(t *testing.T, cp runtime.Checkpointer) {
	const turns = 150 // past the default compaction interval
	chat(t, chatGraph(t, nil), cp, "t", turns)
	cps := checkChain(t, cp, "t")
	if got := checkChat(t, cps[0]); got != turns {
		t.Fatalf("the newest checkpoint holds %d messages, want %d", got, turns)
	}
	prev := turns
	for _, c := range cps {
		n := checkChat(t, c)
		if n > prev || n < prev-1 {
			t.Fatalf("checkpoint %s holds %d messages after one with %d", c.ID, n, prev)
		}
		prev = n
		got, err := cp.Get(t.Context(), "t", c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Channels) != string(c.Channels) {
			t.Fatalf("Get(%s) channels %q, List gave %q", c.ID, got.Channels, c.Channels)
		}
	}
	st, err := chatGraph(t, nil).Thread(cp, "t").State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if countOf(st.State["messages"]) != turns {
		t.Errorf("ThreadState holds %d messages, want %d", countOf(st.State["messages"]), turns)
	}
}

func testDeltaFork(t *testing.T, cp runtime.Checkpointer) {
	g := chatGraph(t, nil)
	chat(t, g, cp, "t", 100)
	cps := checkChain(t, cp, "t")
	var old *runtime.Checkpoint
	for _, c := range cps {
		if checkChat(t, c) == 7 && len(c.Next) == 0 {
			old = c
		}
	}
	if old == nil {
		t.Fatal("no finished checkpoint with 7 messages")
	}
	res, err := g.Thread(cp, "t").Fork(old.ID).Invoke(t.Context(), nil)
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("run from %s: %s %v", old.ID, res.Status, err)
	}
	if n := countOf(res.State["messages"]); n != 8 {
		t.Fatalf("the fork holds %d messages, want 8", n)
	}
	tip, err := cp.Get(t.Context(), "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if checkChat(t, tip) != 8 {
		t.Fatalf("the fork's tip %s does not hold 8 messages", tip.ID)
	}
	// The fork's branch continues; the old branch is intact.
	chat(t, g, cp, "t", 70)
	if tip, _ = cp.Get(t.Context(), "t", ""); checkChat(t, tip) != 78 {
		t.Fatalf("the branch's tip does not hold 78 messages")
	}
	if c, err := cp.Get(t.Context(), "t", cps[0].ID); err != nil || checkChat(t, c) != 100 {
		t.Fatalf("the old branch's tip %s: %v", cps[0].ID, err)
	}
}

// testDeltaCrash stops a thread's runs at chosen supersteps (the
// superstep writes nothing) and continues it with a graph value that
// holds nothing of the earlier runs, as a new process would.
func testDeltaCrash(t *testing.T, cp runtime.Checkpointer) {
	stops := map[int]bool{5: true, 64: true, 65: true, 130: true}
	for n := 0; n < 140; {
		stopped := false
		g := chatGraph(t, func(k int) bool {
			if stops[k] {
				delete(stops, k)
				stopped = true
			}
			return stopped
		})
		res, err := g.Thread(cp, "t").Invoke(t.Context(), nil)
		if stopped {
			if err == nil || res.Status != runtime.StatusError {
				t.Fatalf("superstep %d: want a failed run, got %s %v", n, res.Status, err)
			}
			continue
		}
		if err != nil || res.Status != runtime.StatusDone {
			t.Fatalf("turn %d: %s %v", n, res.Status, err)
		}
		n++
		latest, err := cp.Get(t.Context(), "t", "")
		if err != nil {
			t.Fatal(err)
		}
		if got := checkChat(t, latest); got != n {
			t.Fatalf("after turn %d the newest checkpoint holds %d messages", n, got)
		}
	}
}

// deltaCP skips t unless cp stores deltas.
func deltaCP(t *testing.T, cp runtime.Checkpointer) checkpoint.DeltaCheckpointer {
	t.Helper()
	dc, ok := cp.(checkpoint.DeltaCheckpointer)
	if !ok {
		t.Skip("the backend stores full snapshots only (no checkpoint.DeltaCheckpointer)")
	}
	return dc
}

// putLog writes checkpoint n of thread as a delta of base: "log" gains
// element n and "n" becomes n.
func putLog(t *testing.T, dc checkpoint.DeltaCheckpointer, thread, base string, n int) *runtime.Checkpoint {
	t.Helper()
	c := mk(thread, base, n)
	c.Channels = nil
	d := checkpoint.Delta{Base: base, Writes: []checkpoint.ChannelWrite{
		{Channel: "log", Append: true, Value: json.RawMessage(fmt.Sprintf(`[%d]`, n))},
		{Channel: "n", Value: json.RawMessage(fmt.Sprint(n))},
	}}
	if err := dc.PutDelta(t.Context(), c, d, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

// checkLog fails unless c's channels hold log 0..n and n.
func checkLog(c *runtime.Checkpoint) error {
	var st struct {
		Log []int `json:"log"`
		N   int   `json:"n"`
	}
	if err := json.Unmarshal(c.Channels, &st); err != nil {
		return fmt.Errorf("checkpoint %s: channels %q: %v", c.ID, c.Channels, err)
	}
	want := make([]int, st.N+1)
	for i := range want {
		want[i] = i
	}
	if d := cmp.Diff(want, st.Log); d != "" || c.Step != st.N {
		return fmt.Errorf("checkpoint %s (step %d): log (-want +got):\n%s", c.ID, c.Step, d)
	}
	return nil
}

func putLogBase(t *testing.T, cp runtime.Checkpointer, thread string) *runtime.Checkpoint {
	t.Helper()
	c := mk(thread, "", 0)
	c.Channels = json.RawMessage(`{"log":[0],"n":0}`)
	if err := cp.Put(t.Context(), c, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

func testDeltaRace(t *testing.T, cp runtime.Checkpointer) {
	dc := deltaCP(t, cp)
	base := putLogBase(t, cp, "t")
	const n = 300
	ids := make(chan string, n)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n/3; i++ {
				c, err := cp.Get(t.Context(), "t", "")
				if err == nil {
					err = checkLog(c)
				}
				if err == nil {
					select {
					case id := <-ids:
						c, err = cp.Get(t.Context(), "t", id)
						if err == nil {
							err = checkLog(c)
						}
					default:
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	prev := base.ID
	for i := 1; i <= n; i++ {
		c := putLog(t, dc, "t", prev, i)
		prev = c.ID
		select {
		case ids <- c.ID:
		default:
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all, err := cp.List(t.Context(), "t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n+1 {
		t.Fatalf("List: %d checkpoints, want %d", len(all), n+1)
	}
	for _, c := range all {
		if err := checkLog(c); err != nil {
			t.Fatal(err)
		}
	}
}

func testDeltaUnknownBase(t *testing.T, cp runtime.Checkpointer) {
	dc := deltaCP(t, cp)
	base := putLogBase(t, cp, "t")
	c := mk("t", "nope", 1)
	err := dc.PutDelta(t.Context(), c, checkpoint.Delta{Base: "nope"}, nil)
	if !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("PutDelta on an unknown base: %v, want ErrNotFound", err)
	}
	c = mk("other", base.ID, 1)
	if err := dc.PutDelta(t.Context(), c, checkpoint.Delta{Base: base.ID}, nil); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("PutDelta on another thread's checkpoint: %v, want ErrNotFound", err)
	}
}

func testDeltaDelete(t *testing.T, cp runtime.Checkpointer) {
	dc := deltaCP(t, cp)
	prev := putLogBase(t, cp, "t").ID
	for i := 1; i <= 100; i++ {
		prev = putLog(t, dc, "t", prev, i).ID
	}
	keep := putLogBase(t, cp, "t2")
	if err := cp.DeleteThread(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Get(t.Context(), "t", ""); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Get after DeleteThread: %v, want ErrNotFound", err)
	}
	if all, err := cp.List(t.Context(), "t", 0); err != nil || len(all) != 0 {
		t.Fatalf("List after DeleteThread: %d, %v", len(all), err)
	}
	if err := dc.PutDelta(t.Context(), mk("t", prev, 101), checkpoint.Delta{Base: prev}, nil); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("PutDelta on a deleted thread's checkpoint: %v, want ErrNotFound", err)
	}
	if c, err := cp.Get(t.Context(), "t2", ""); err != nil || c.ID != keep.ID {
		t.Fatalf("another thread's checkpoint after DeleteThread: %v", err)
	}
}

// RunChat runs turns runs of a one-node chat on thread of cp, each
// appending a message of msgBytes bytes to an append channel, and checks
// that the thread's latest checkpoint holds every message: a thread whose
// state grows, for a store's own tests of how its deltas and snapshots
// are stored.
func RunChat(t testing.TB, cp runtime.Checkpointer, thread string, turns, msgBytes int) {
	t.Helper()
	msg := strings.Repeat("m", msgBytes)
	g, err := runtime.NewBuilder("chat").Channel("messages", spec.Append).
		Node("say", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{"messages": msg}, nil
		}).
		Edge(spec.Start, "say").Edge("say", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	for range turns {
		if _, err := g.Thread(cp, thread).Invoke(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}
	latest, err := cp.Get(t.Context(), thread, "")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Messages []string `json:"messages"`
	}
	if err := json.Unmarshal(latest.Channels, &st); err != nil {
		t.Fatalf("checkpoint %s: %v", latest.ID, err)
	}
	if len(st.Messages) != turns {
		t.Fatalf("the latest checkpoint holds %d messages, want %d", len(st.Messages), turns)
	}
}
