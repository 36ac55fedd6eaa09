package runtime

import (
	"encoding/json"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

func TestDeltaRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, prev, next string
		writes           int
		appends          int
		fits             bool
	}{
		{"unchanged", `{"a":[1],"b":"x"}`, `{"a":[1],"b":"x"}`, 0, 0, true},
		{"append", `{"a":[1],"b":"x"}`, `{"a":[1,{"k":"]"}],"b":"x"}`, 1, 1, true},
		{"set", `{"a":[1],"b":"x"}`, `{"a":[1],"b":"y"}`, 1, 0, true},
		{"empty array grows", `{"a":[]}`, `{"a":[1]}`, 1, 0, true},
		{"array shrinks", `{"a":[1,2]}`, `{"a":[1]}`, 1, 0, true},
		{"prefix but not an append", `{"a":[12]}`, `{"a":[123]}`, 1, 0, true},
		{"escaped key", `{"a\"b":[1]}`, `{"a\"b":[1,2]}`, 1, 1, true},
		{"new channel", `{"a":[1]}`, `{"a":[1],"b":1}`, 0, 0, false},
		{"renamed channel", `{"a":[1]}`, `{"b":[1]}`, 0, 0, false},
		{"not compact", `{"a":[1]}`, `{"a": [1,2]}`, 0, 0, false},
		{"not an object", `[1]`, `[1,2]`, 0, 0, false},
		{"value grows past a prefix", `{"a":1,"b":2}`, `{"a":12,"b":2}`, 1, 0, true},
		{"nested append", `{"a":[[1]],"b":{}}`, `{"a":[[1],[2,"]"]],"b":{"k":[]}}`, 2, 1, true},
		{"trailing garbage", `{"a":1}`, `{"a":1}x`, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, fits := deltaWrites([]byte(tc.prev), []byte(tc.next))
			if fits != tc.fits {
				t.Fatalf("fits = %v, want %v", fits, tc.fits)
			}
			if !fits {
				return
			}
			appends := 0
			for _, w := range ws {
				if w.Append {
					appends++
				}
			}
			if len(ws) != tc.writes || appends != tc.appends {
				t.Fatalf("writes %+v: want %d writes, %d appends", ws, tc.writes, tc.appends)
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
