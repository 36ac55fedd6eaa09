package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestChannelsCache walks the cache through the sequences a Store drives
// it with: full channels, deltas after them, reads of each, a delta of
// another checkpoint, the fold of a long run of deltas, eviction and
// forgetting.
func TestChannelsCache(t *testing.T) {
	app := func(v string) []checkpoint.ChannelWrite {
		return []checkpoint.ChannelWrite{{Channel: "m", Append: true, Value: []byte(`["` + v + `"]`)}}
	}
	type step struct {
		op, thread, id, base, value string
		want                        string // full's channels, "" for a miss
	}
	tests := []struct {
		name  string
		max   int
		steps []step
	}{
		{"full then deltas", 1 << 20, []step{
			{op: "put", thread: "t", id: "a", value: `{"m":["x"]}`},
			{op: "extend", thread: "t", id: "b", base: "a", value: "y"},
			{op: "extend", thread: "t", id: "c", base: "b", value: "z"},
			{op: "full", thread: "t", id: "a", want: `{"m":["x"]}`},
			{op: "full", thread: "t", id: "c", want: `{"m":["x","y","z"]}`},
			{op: "full", thread: "t", id: "b"}, // moved past it
			{op: "full", thread: "u", id: "c"},
		}},
		{"a delta of another checkpoint is not kept", 1 << 20, []step{
			{op: "put", thread: "t", id: "a", value: `{"m":["x"]}`},
			{op: "extend", thread: "t", id: "b", base: "a", value: "y"},
			{op: "extend", thread: "t", id: "fork", base: "a", value: "f"},
			{op: "full", thread: "t", id: "fork"},
			{op: "full", thread: "t", id: "b", want: `{"m":["x","y"]}`},
		}},
		{"no entry, no extension", 1 << 20, []step{
			{op: "extend", thread: "t", id: "b", base: "a", value: "y"},
			{op: "full", thread: "t", id: "b"},
		}},
		{"forget", 1 << 20, []step{
			{op: "put", thread: "t", id: "a", value: `{"m":[]}`},
			{op: "forget", thread: "t"},
			{op: "full", thread: "t", id: "a"},
		}},
		{"the least recently used thread goes", 200, []step{
			{op: "put", thread: "t1", id: "a", value: `{"m":["` + strings.Repeat("1", 40) + `"]}`},
			{op: "put", thread: "t2", id: "a", value: `{"m":["` + strings.Repeat("2", 40) + `"]}`},
			{op: "full", thread: "t1", id: "a", want: `{"m":["` + strings.Repeat("1", 40) + `"]}`},
			{op: "put", thread: "t3", id: "a", value: `{"m":["` + strings.Repeat("3", 40) + `"]}`},
			{op: "put", thread: "t4", id: "a", value: `{"m":["` + strings.Repeat("4", 40) + `"]}`},
			{op: "full", thread: "t2", id: "a"}, // used least recently
			{op: "full", thread: "t1", id: "a", want: `{"m":["` + strings.Repeat("1", 40) + `"]}`},
			{op: "full", thread: "t4", id: "a", want: `{"m":["` + strings.Repeat("4", 40) + `"]}`},
		}},
		{"a state over a quarter of the cache is not kept", 40, []step{
			{op: "put", thread: "t", id: "a", value: `{"m":["0123456789"]}`},
			{op: "full", thread: "t", id: "a"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChannelsCache(tt.max)
			for i, s := range tt.steps {
				switch s.op {
				case "put":
					c.put(s.thread, s.id, []byte(s.value))
				case "extend":
					c.extend(s.thread, s.id, s.base, app(s.value))
				case "forget":
					c.forget(s.thread)
				case "full":
					got, ok := c.full(s.thread, s.id)
					if ok != (s.want != "") || string(got) != s.want {
						t.Fatalf("step %d: full(%q, %q) = %q, %v; want %q", i, s.thread, s.id, got, ok, s.want)
					}
				}
				if c.bytes < 0 || (c.bytes > c.max && c.lru.Len() > 0) {
					t.Fatalf("step %d: %d bytes held, max %d", i, c.bytes, c.max)
				}
			}
		})
	}
}

// TestChannelsCacheFoldsLongRuns keeps a thread's entry within cacheLinks
// deltas: the channels stay right across many folds.
func TestChannelsCacheFoldsLongRuns(t *testing.T) {
	c := newChannelsCache(1 << 20)
	c.put("t", "c0", []byte(`{"m":["0"]}`))
	want := []string{`"0"`}
	for i := 1; i <= 5*cacheLinks+3; i++ {
		v := fmt.Sprint(i)
		want = append(want, `"`+v+`"`)
		c.extend("t", fmt.Sprint("c", i), fmt.Sprint("c", i-1), []checkpoint.ChannelWrite{{Channel: "m", Append: true, Value: []byte(`[` + want[len(want)-1] + `]`)}})
		if n := len(c.threads["t"].links); n > cacheLinks {
			t.Fatalf("after %d deltas the entry keeps %d of them, want at most %d", i, n, cacheLinks)
		}
	}
	got, ok := c.full("t", fmt.Sprint("c", 5*cacheLinks+3))
	if w := `{"m":[` + strings.Join(want, ",") + `]}`; !ok || string(got) != w {
		t.Fatalf("full = %q, %v; want %q", got, ok, w)
	}
}

// TestCachedReadsSkipTheChain runs a chat thread whose deltas make a long
// chain: once the Store has written or read a thread's latest checkpoint,
// a run's read of it reads no chain of deltas from the file (before the
// cache, every turn read the chain since the last snapshot, up to 1000
// rows), and every checkpoint it gives equals what a Store without the
// cache rebuilds from the file.
func TestCachedReadsSkipTheChain(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "chat.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := chatGraph(t)
	th := g.Thread(s, "chat")
	for turn := range 60 {
		out, err := th.Invoke(ctx, runtime.Values{"messages": fmt.Sprint("user ", turn)})
		if err == nil && out.Status == runtime.StatusInterrupted {
			out, err = th.Resume(ctx, runtime.Answer("yes"))
		}
		if err != nil || out.Status != runtime.StatusDone {
			t.Fatalf("turn %d: %v %v", turn, out.Status, err)
		}
	}
	if n := s.chainReads.Load(); n != 0 {
		t.Errorf("60 turns read a chain of deltas %d times, want 0", n)
	}
	if n := rowCount(t, s, "SELECT count(*) FROM ilmek_checkpoints WHERE coalesce(base_id, parent_id) <> ''"); n < 100 {
		t.Fatalf("%d delta rows: the thread did not make a chain", n)
	}

	plain, err := Open(path, CacheBytes(0))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	all, err := plain.List(ctx, "chat", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range slices.Backward(all) {
		want, err := plain.Get(ctx, "chat", c.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The cache answers for the checkpoints it holds, the file for
		// the rest: both must give the stored channels.
		got, err := s.Get(ctx, "chat", c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want.Channels), string(got.Channels)); diff != "" {
			t.Fatalf("checkpoint %s: cached channels differ from the file's (-file +cached):\n%s", c.ID, diff)
		}
	}
	latest, err := s.Get(ctx, "chat", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := messages(t, latest); len(got) != 120 {
		t.Fatalf("latest holds %d messages, want 120", len(got))
	}
}

// TestCacheSeesOtherWriters: a Store that cached a thread's latest
// checkpoint reads what another Store (another process) wrote to the
// thread after it, and forgets a thread it deletes.
func TestCacheSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "two.db")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	g := chatGraph(t)
	turn := func(s *Store, n int) {
		t.Helper()
		th := g.Thread(s, "chat")
		for i := range n {
			out, err := th.Invoke(ctx, runtime.Values{"messages": fmt.Sprint("user ", i)})
			if err == nil && out.Status == runtime.StatusInterrupted {
				out, err = th.Resume(ctx, runtime.Answer("yes"))
			}
			if err != nil || out.Status != runtime.StatusDone {
				t.Fatalf("turn %d: %v %v", i, out.Status, err)
			}
		}
	}
	turn(a, 5)
	turn(b, 3) // b reads a's latest from the file, then writes its own
	turn(a, 2) // a must continue from b's latest, not its cached one
	latest, err := a.Get(ctx, "chat", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := messages(t, latest); len(got) != 20 {
		t.Fatalf("after 10 turns in two Stores the thread holds %d messages, want 20: %q", len(got), got)
	}
	if err := a.DeleteThread(ctx, "chat"); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.cache.full("chat", latest.ID); ok {
		t.Fatal("a deleted thread's channels are still cached")
	}
	if _, err := a.Get(ctx, "chat", ""); err == nil {
		t.Fatal("a deleted thread still has a latest checkpoint")
	}
}

// TestCacheAgreesWithTheFile drives two threads of one Store through a
// random mix of turns, forks from older checkpoints, prunes (which store
// deltas again in full), compactions (a small Compact limit) and deletes,
// with a second Store on the same file that has no cache and writes
// turns of its own; after every operation, every checkpoint either Store
// reads equals what the cacheless one rebuilds from the file.
func TestCacheAgreesWithTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mix.db")
	compact := Compact(checkpoint.Compaction{Every: 7})
	s, err := Open(path, compact)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	plain, err := Open(path, compact, CacheBytes(0))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	g := chatGraph(t)
	seed := uint64(35)
	if v, err := strconv.ParseUint(os.Getenv("ILMEK_CACHE_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	// turn runs th, and answers a pause on the thread's latest (a fork's
	// pause is its branch's tip).
	turn := func(th, latest *runtime.Thread[runtime.Values, runtime.Values]) {
		t.Helper()
		// Messages of 40 bytes: a thread's channels pass bigChannels
		// within its first turns, and are stored apart from then on.
		out, err := th.Invoke(ctx, runtime.Values{"messages": strings.Repeat("u", 40)})
		if err == nil && out.Status == runtime.StatusInterrupted {
			out, err = latest.Resume(ctx, runtime.Answer("yes"))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	apart := 0 // the most channels stored apart at once
	check := func(step int, op, thread string) {
		t.Helper()
		for _, q := range []struct{ what, q string }{
			{"channels stored apart that no checkpoint names", "SELECT count(*) FROM ilmek_channels WHERE rid NOT IN (SELECT big FROM ilmek_checkpoints WHERE big IS NOT NULL)"},
			{"checkpoints naming channels that are not stored", "SELECT count(*) FROM ilmek_checkpoints WHERE big IS NOT NULL AND big NOT IN (SELECT rid FROM ilmek_channels)"},
			{"checkpoints naming channels another names too", "SELECT count(*) - count(DISTINCT big) FROM ilmek_checkpoints WHERE big IS NOT NULL"},
			{"rows holding channels of more than bigChannels bytes", fmt.Sprintf("SELECT count(*) FROM ilmek_checkpoints WHERE length(channels) > %d", bigChannels)},
		} {
			if n := rowCount(t, s, q.q); n != 0 {
				t.Fatalf("step %d (%s), thread %s: %d %s", step, op, thread, n, q.what)
			}
		}
		apart = max(apart, rowCount(t, s, "SELECT count(*) FROM ilmek_channels"))
		all, err := plain.List(ctx, thread, 0)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{""}
		for _, c := range all {
			ids = append(ids, c.ID)
		}
		for _, id := range ids {
			want, werr := plain.Get(ctx, thread, id)
			got, gerr := s.Get(ctx, thread, id)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("step %d (%s), thread %s, checkpoint %q: cacheless read %v, cached read %v", step, op, thread, id, werr, gerr)
			}
			if werr != nil {
				continue
			}
			if got.ID != want.ID || string(got.Channels) != string(want.Channels) {
				t.Fatalf("step %d (%s), thread %s, checkpoint %q: cached %s %s, file %s %s", step, op, thread, id, got.ID, got.Channels, want.ID, want.Channels)
			}
		}
	}
	for step := range 150 {
		thread := []string{"a", "b"}[rng.IntN(2)]
		var op string
		switch r := rng.IntN(20); {
		case r < 11:
			op = "turn"
			turn(g.Thread(s, thread), g.Thread(s, thread))
		case r < 14:
			op = "turn elsewhere"
			turn(g.Thread(plain, thread), g.Thread(plain, thread))
		case r < 16:
			op = "fork"
			all, err := s.List(ctx, thread, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) == 0 {
				continue
			}
			c := all[rng.IntN(len(all))]
			if len(c.Pending) > 0 {
				continue
			}
			turn(g.Thread(s, thread).Fork(c.ID), g.Thread(s, thread))
		case r < 18:
			op = "prune"
			if _, err := s.Prune(ctx, thread, checkpoint.PruneOptions{KeepLast: 1 + rng.IntN(6)}); err != nil {
				t.Fatal(err)
			}
		case r < 19:
			op = "prune elsewhere"
			if _, err := plain.Prune(ctx, thread, checkpoint.PruneOptions{KeepLast: 1 + rng.IntN(6)}); err != nil {
				t.Fatal(err)
			}
		default:
			op = "delete"
			if err := []*Store{s, plain}[rng.IntN(2)].DeleteThread(ctx, thread); err != nil {
				t.Fatal(err)
			}
		}
		check(step, op, thread)
	}
	if apart == 0 {
		t.Fatal("no channels were stored apart: the test does not reach bigChannels")
	}
	t.Logf("chains read: %d with the cache (its own reads), %d without (its reads and the checks')", s.chainReads.Load(), plain.chainReads.Load())
}
