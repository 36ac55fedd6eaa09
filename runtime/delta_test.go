package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

func TestDeltaRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, prev, next string
		writes           int
		appends          int
		fits             bool
		merges           int
	}{
		{"unchanged", `{"a":[1],"b":"x"}`, `{"a":[1],"b":"x"}`, 0, 0, true, 0},
		{"append", `{"a":[1],"b":"x"}`, `{"a":[1,{"k":"]"}],"b":"x"}`, 1, 1, true, 0},
		{"set", `{"a":[1],"b":"x"}`, `{"a":[1],"b":"y"}`, 1, 0, true, 0},
		{"empty array grows", `{"a":[]}`, `{"a":[1]}`, 1, 0, true, 0},
		{"array shrinks", `{"a":[1,2]}`, `{"a":[1]}`, 1, 0, true, 0},
		{"prefix but not an append", `{"a":[12]}`, `{"a":[123]}`, 1, 0, true, 0},
		{"escaped key", `{"a\"b":[1]}`, `{"a\"b":[1,2]}`, 1, 1, true, 0},
		{"new channel", `{"a":[1]}`, `{"a":[1],"b":1}`, 0, 0, false, 0},
		{"renamed channel", `{"a":[1]}`, `{"b":[1]}`, 0, 0, false, 0},
		{"not compact", `{"a":[1]}`, `{"a": [1,2]}`, 0, 0, false, 0},
		{"not an object", `[1]`, `[1,2]`, 0, 0, false, 0},
		{"value grows past a prefix", `{"a":1,"b":2}`, `{"a":12,"b":2}`, 1, 0, true, 0},
		{"nested append", `{"a":[[1]],"b":{}}`, `{"a":[[1],[2,"]"]],"b":{"k":[]}}`, 2, 1, true, 0},
		{"trailing garbage", `{"a":1}`, `{"a":1}x`, 0, 0, false, 0},
		{"merge adds a key", `{"m":{"a":1,"c":3},"x":1}`, `{"m":{"a":1,"b":2,"c":3},"x":1}`, 1, 0, true, 1},
		{"merge changes a key", `{"m":{"a":1,"b":2,"c":"long value"}}`, `{"m":{"a":1,"b":22,"c":"long value"}}`, 1, 0, true, 1},
		{"merge adds last", `{"m":{"a":"long value"}}`, `{"m":{"a":"long value","z":1}}`, 1, 0, true, 1},
		{"key removed: whole value", `{"m":{"a":1,"b":2}}`, `{"m":{"b":2}}`, 1, 0, true, 0},
		{"unsorted insert: whole value", `{"m":{"b":"long value","a":1}}`, `{"m":{"b":"long value","c":3,"a":1}}`, 1, 0, true, 0},
		{"merge saves nothing: whole value", `{"m":{"a":1}}`, `{"m":{"a":2}}`, 1, 0, true, 0},
		{"escaped keys", `{"m":{"a\"b":[1],"q":"long value"}}`, `{"m":{"a\"b":[1],"a\u003c":2,"q":"long value"}}`, 1, 0, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, fits := deltaWrites([]byte(tc.prev), []byte(tc.next))
			if fits != tc.fits {
				t.Fatalf("fits = %v, want %v", fits, tc.fits)
			}
			if !fits {
				return
			}
			appends, merges := 0, 0
			for _, w := range ws {
				if w.Append {
					appends++
				}
				if w.Merge {
					merges++
				}
			}
			if len(ws) != tc.writes || appends != tc.appends || merges != tc.merges {
				t.Fatalf("writes %+v: want %d writes, %d appends, %d merges", ws, tc.writes, tc.appends, tc.merges)
			}
			got, err := ApplyDeltas([]byte(tc.prev), ws)
			if err != nil || string(got) != tc.next {
				t.Fatalf("ApplyDeltas = %s, %v; want %s", got, err, tc.next)
			}
		})
	}
}

// FuzzDelta checks that whenever a delta is made, applying it gives back
// the next state byte for byte, also over several deltas in a row.
func FuzzDelta(f *testing.F) {
	f.Add(`{"a":[1],"b":"x"}`, `{"a":[1,2],"b":"x"}`, `{"a":[1,2,3],"b":"y"}`)
	f.Add(`{"a":["]"]}`, `{"a":["]","[",{"x":"}"}]}`, `{"a":[]}`)
	f.Add(`{"m":{"a":1,"c":"long"}}`, `{"m":{"a":1,"b":2,"c":"long"}}`, `{"m":{"a":1,"b":3,"c":"long","d":[4]}}`)
	f.Add(`{"m":{"b":"long value","a":1}}`, `{"m":{"b":"long value","a":1,"c":1}}`, `{"m":{"b":"long value","a":2,"c":1}}`)
	f.Fuzz(func(t *testing.T, s0, s1, s2 string) {
		var c splitCache // the second delta reuses the split of s1
		w1, ok1 := c.writes([]byte(s0), []byte(s1))
		if !ok1 || !json.Valid([]byte(s0)) || !json.Valid([]byte(s1)) {
			return
		}
		got, err := ApplyDeltas([]byte(s0), w1)
		if err != nil || string(got) != s1 {
			t.Fatalf("one delta: %s, %v; want %s", got, err, s1)
		}
		w2, ok2 := c.writes([]byte(s1), []byte(s2))
		if w, ok := deltaWrites([]byte(s1), []byte(s2)); ok != ok2 || len(w) != len(w2) {
			t.Fatalf("a cached split gives %v %d writes, a fresh one %v %d", ok2, len(w2), ok, len(w))
		}
		if !ok2 || !json.Valid([]byte(s2)) {
			return
		}
		got, err = ApplyDeltas([]byte(s0), w1, w2)
		if err != nil || string(got) != s2 {
			t.Fatalf("two deltas: %s, %v; want %s", got, err, s2)
		}
	})
}

// TestMemoryStoresDeltas checks that a chat thread's supersteps reach the
// backend as deltas of one message, with a snapshot every Every of them.
func TestMemoryStoresDeltas(t *testing.T) {
	g, err := NewBuilder("chat").Channel("messages", spec.Append).
		Node("say", func(*Ctx, Values) (Values, error) { return Values{"messages": "hello"}, nil }).
		Edge(spec.Start, "say").Edge("say", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	m := NewMemory()
	m.SetCompaction(Compaction{Every: 10})
	for i := 0; i < 50; i++ {
		if _, err := g.Invoke(t.Context(), nil, Thread("t"), WithCheckpointer(m)); err != nil {
			t.Fatal(err)
		}
	}
	snaps, maxDelta := 0, 0
	for _, e := range m.threads["t"].cps {
		if e.base == "" {
			snaps++
			continue
		}
		if n := len(e.writes); n > 1 {
			t.Fatalf("checkpoint %s: %d writes, want at most one", e.cp.ID, n)
		}
		for _, w := range e.writes {
			maxDelta = max(maxDelta, len(w.Value))
		}
	}
	if n := len(m.threads["t"].cps); snaps < n/10 || snaps > n/10+2 {
		t.Errorf("%d snapshots among %d checkpoints, want one about every 10", snaps, n)
	}
	if maxDelta > len(`["hello"]`) {
		t.Errorf("a delta holds %d bytes, want only the appended message", maxDelta)
	}
}

// TestMergeChannelStoresMergedKeys checks that a merge channel's superstep
// reaches the backend as the keys it merged, and that every checkpoint
// reads back as the full map.
func TestMergeChannelStoresMergedKeys(t *testing.T) {
	g, err := NewBuilder("facts").Channel("facts", spec.Merge).Channel("n", "").
		Node("learn", func(_ *Ctx, s Values) (Values, error) {
			n := 0
			switch v := s["n"].(type) { // int as written, float64 once read back
			case int:
				n = v
			case float64:
				n = int(v)
			}
			key := fmt.Sprintf("fact-%03d", n)
			return Values{"facts": map[string]any{key: strings.Repeat("x", 40)}, "n": n + 1}, nil
		}).
		Edge(spec.Start, "learn").Edge("learn", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	m := NewMemory()
	for i := 0; i < 60; i++ {
		if _, err := g.Invoke(t.Context(), nil, Thread("t"), WithCheckpointer(m)); err != nil {
			t.Fatal(err)
		}
	}
	merges := 0
	for _, e := range m.threads["t"].cps {
		for _, w := range e.writes {
			if w.Channel == "facts" {
				if !w.Merge || len(w.Value) > 80 {
					t.Fatalf("checkpoint %s writes facts as %s (merge %t), want only the merged key", e.cp.ID, w.Value, w.Merge)
				}
				merges++
			}
		}
	}
	if merges < 40 {
		t.Errorf("%d merge writes over 60 runs", merges)
	}
	latest, err := m.Get(t.Context(), "t", "")
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Facts map[string]string }
	if err := json.Unmarshal(latest.Channels, &st); err != nil || len(st.Facts) != 60 || st.Facts["fact-059"] == "" {
		t.Fatalf("the latest checkpoint holds %d facts (%v)", len(st.Facts), err)
	}
}
