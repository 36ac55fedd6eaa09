package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// cacheChat is a chat graph whose state has every kind of channel: an
// append channel of objects, a merge channel, a number written as an int
// and a channel of a custom reducer; it pauses every third turn.
func cacheChat(t *testing.T) *Graph[Values, Values] {
	t.Helper()
	g, err := NewBuilder("chat").
		Channel("messages", spec.Append).Channel("profile", spec.Merge).Channel("turns", spec.LastWrite).
		Channel("longest", "").
		Node("assistant", func(ctx *Ctx, s Values) (Values, error) {
			l, _ := s["messages"].([]any)
			if len(l)%3 == 2 {
				if _, err := Interrupt[bool](ctx, "go on?"); err != nil {
					return nil, err
				}
			}
			return Values{
				"messages": map[string]any{"role": "assistant", "n": len(l), "seen": s["turns"]},
				"profile":  map[string]any{fmt.Sprint("k", len(l)%4): len(l)},
				"turns":    len(l) + 1,
				"longest":  []int{len(l), 7},
			}, nil
		}).
		Edge(spec.Start, "assistant").Edge("assistant", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func cacheTurn(t *testing.T, th *Thread[Values, Values], n int) Result[Values] {
	t.Helper()
	ctx := context.Background()
	res, err := th.Invoke(ctx, Values{"messages": map[string]any{"role": "user", "text": fmt.Sprint("hi ", n)}})
	if err == nil && res.Status == StatusInterrupted {
		res, err = th.Resume(ctx, Answer(true))
	}
	if err != nil || res.Status != StatusDone {
		t.Fatalf("turn %d: %v %v", n, res.Status, err)
	}
	return res
}

// TestStateCacheStartsFromTheLastRun: runs of one graph on a thread start
// from the state the last run left (no decoding) and give exactly what a
// graph that decodes every run gives; the state a caller changes, a run
// that fails, a write from elsewhere and a deleted thread do not leak
// into the next run.
func TestStateCacheStartsFromTheLastRun(t *testing.T) {
	ctx := context.Background()
	cp := checkpoint.NewMemory()
	cached := cacheChat(t)
	th := cached.Thread(cp, "c")
	ref := checkpoint.NewMemory()
	var got, want Result[Values]
	for n := range 12 {
		before := stateDecodes.Load()
		got = cacheTurn(t, th, n)
		decoded := stateDecodes.Load() - before
		// A fresh graph has an empty cache: it decodes every run.
		want = cacheTurn(t, cacheChat(t).Thread(ref, "c"), n)
		if n > 0 && decoded != 0 {
			t.Errorf("turn %d decoded the state %d times, want 0 (the last run's state)", n, decoded)
		}
		if diff := cmp.Diff(want.State, got.State); diff != "" {
			t.Fatalf("turn %d: the state differs from a decoding run's (-decoded +cached):\n%s", n, diff)
		}
		// The caller's changes to the state it got stay its own.
		msgs := got.State["messages"].([]any)
		msgs[0].(map[string]any)["text"] = "changed by the caller"
		got.State["profile"].(map[string]any)["k0"] = "changed"
		got.State["messages"] = append(msgs, "appended by the caller")
	}
	stored := func(c checkpoint.Checkpointer) string {
		t.Helper()
		l, err := c.Get(ctx, "c", "")
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(l.Channels, &v); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	if a, b := stored(cp), stored(ref); a != b {
		t.Fatalf("stored states differ:\ncached %s\ndecoded %s", a, b)
	}

	// decodes runs turn n on the cached graph, which must decode (the
	// thread's latest checkpoint is not the one its cache holds), and
	// compares it with a decoding graph's.
	decodes := func(n int, after string) {
		t.Helper()
		before := stateDecodes.Load()
		got := cacheTurn(t, th, n)
		want := cacheTurn(t, cacheChat(t).Thread(ref, "c"), n)
		if stateDecodes.Load() == before {
			t.Errorf("a run after %s did not decode the thread's latest checkpoint", after)
		}
		if diff := cmp.Diff(want.State, got.State); diff != "" {
			t.Fatalf("after %s: (-decoded +cached):\n%s", after, diff)
		}
	}

	// Another graph (another process) writes the thread: the cached
	// state is of an older checkpoint.
	cacheTurn(t, cacheChat(t).Thread(cp, "c"), 12)
	cacheTurn(t, cacheChat(t).Thread(ref, "c"), 12)
	decodes(13, "another graph's write")

	// A run that fails took the cached state.
	if res, err := th.Invoke(ctx, Values{"undeclared": 1}); err == nil && res.Err == nil {
		t.Fatalf("a run with an undeclared channel in its input ended %s", res.Status)
	}
	decodes(14, "a failed run")

	// Deleting the thread forgets its state.
	if err := th.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	got = cacheTurn(t, th, 0)
	if n := len(got.State["messages"].([]any)); n != 2 {
		t.Fatalf("a thread deleted and started again holds %d messages, want 2", n)
	}
}

// headCounter is Memory, counting how the latest checkpoint is read.
type headCounter struct {
	*checkpoint.Memory
	fullLatest int // Get of the latest, or GetLatest that built channels
	headOnly   int // GetLatest that left the channels out
}

func (h *headCounter) Get(ctx context.Context, thread, id string) (*Checkpoint, error) {
	if id == "" {
		h.fullLatest++
	}
	return h.Memory.Get(ctx, thread, id)
}

func (h *headCounter) GetLatest(ctx context.Context, thread, known string) (*Checkpoint, error) {
	c, err := h.Memory.GetLatest(ctx, thread, known)
	if err == nil && c.Channels == nil {
		h.headOnly++
	} else {
		h.fullLatest++
	}
	return c, err
}

// TestStateCacheReadsNoChannels: a run that starts from the state its
// graph holds reads the thread's latest checkpoint without its channels
// (checkpoint.LatestReader), and a run whose input is empty then commits
// a delta of no writes (the latest checkpoint's channels, which it does
// not have, are never needed); both give what a decoding graph gives,
// and the stored channels stay the same.
func TestStateCacheReadsNoChannels(t *testing.T) {
	ctx := context.Background()
	cp := &headCounter{Memory: checkpoint.NewMemory()}
	th := cacheChat(t).Thread(cp, "c")
	ref := checkpoint.NewMemory()
	for n := range 9 {
		full, head := cp.fullLatest, cp.headOnly
		got := cacheTurn(t, th, n)
		want := cacheTurn(t, cacheChat(t).Thread(ref, "c"), n)
		if diff := cmp.Diff(want.State, got.State); diff != "" {
			t.Fatalf("turn %d: (-decoded +cached):\n%s", n, diff)
		}
		if n == 0 {
			continue
		}
		// An Invoke, and a Resume on every third turn.
		if cp.fullLatest != full || cp.headOnly == head {
			t.Errorf("turn %d read the latest checkpoint with its channels %d times and without %d times; want 0 and at least 1",
				n, cp.fullLatest-full, cp.headOnly-head)
		}
	}
	// Runs with an empty input start the graph again on the state held:
	// their first checkpoint is a delta of no writes.
	for range 2 {
		before := stateDecodes.Load()
		obs := &commitBytes{}
		got, err := th.Invoke(ctx, nil, WithObserver(obs))
		if err == nil && got.Status == StatusInterrupted {
			got, err = th.Resume(ctx, Answer(true))
		}
		want, werr := cacheChat(t).Thread(ref, "c").Invoke(ctx, nil)
		if werr == nil && want.Status == StatusInterrupted {
			want, werr = cacheChat(t).Thread(ref, "c").Resume(ctx, Answer(true))
		}
		if err != nil || werr != nil {
			t.Fatalf("a run with an empty input: %v; decoding: %v", err, werr)
		}
		if stateDecodes.Load() != before+1 { // the decoding graph's run
			t.Errorf("runs with an empty input decoded the state %d times, want 1 (the decoding graph's)", stateDecodes.Load()-before)
		}
		if diff := cmp.Diff(want.State, got.State); diff != "" {
			t.Fatalf("a run with an empty input: (-decoded +cached):\n%s", diff)
		}
		if latest, err := ref.Get(ctx, "c", ""); err != nil || len(obs.bytes) == 0 || obs.bytes[0] >= len(latest.Channels)/2 {
			t.Errorf("a run with an empty input handed over %v bytes per checkpoint (%v); want its first far below the state's %d", obs.bytes, err, len(latest.Channels))
		}
	}
	all, err := cp.List(ctx, "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	refAll, err := ref.List(ctx, "c", 0)
	if err != nil || len(all) != len(refAll) {
		t.Fatalf("%d checkpoints, the decoding graph's thread %d (%v)", len(all), len(refAll), err)
	}
	for i := range all {
		var a, b any
		if err := json.Unmarshal(all[i].Channels, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(refAll[i].Channels, &b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(b, a); diff != "" {
			t.Fatalf("checkpoint %d from the newest: stored channels differ (-decoded +cached):\n%s", i, diff)
		}
	}
}

// commitBytes records the bytes of each checkpoint a run hands over.
type commitBytes struct {
	NopObserver
	bytes []int
}

func (c *commitBytes) CheckpointCommit(_ context.Context, _ RunRecord, r CheckpointRecord) {
	c.bytes = append(c.bytes, r.Bytes)
}
