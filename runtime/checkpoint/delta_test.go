package checkpoint

import (
	"encoding/json"
	"testing"
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
		{"duplicate key", `{"b":[],"b":[]}`, `{"b":[0],"b":""}`, 0, 0, false, 0},
		{"duplicate key, not adjacent", `{"b":1,"c":2,"b":3}`, `{"b":1,"c":2,"b":4}`, 0, 0, false, 0},
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
		var c Differ // the second delta reuses the split of s1
		w1, ok1 := c.Writes([]byte(s0), []byte(s1))
		if !ok1 || !json.Valid([]byte(s0)) || !json.Valid([]byte(s1)) {
			return
		}
		got, err := ApplyDeltas([]byte(s0), w1)
		if err != nil || string(got) != s1 {
			t.Fatalf("one delta: %s, %v; want %s", got, err, s1)
		}
		w2, ok2 := c.Writes([]byte(s1), []byte(s2))
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

func TestDistinctKeys(t *testing.T) {
	many := func(n int, dup bool) []member {
		ms := make([]member, n)
		for i := range ms {
			ms[i].key = []byte{byte('a' + i/26), byte('a' + i%26)}
		}
		if dup {
			ms[n-1].key = ms[0].key
		}
		return ms
	}
	for _, tc := range []struct {
		n    int
		dup  bool
		want bool
	}{{0, false, true}, {1, false, true}, {2, true, false}, {16, false, true}, {16, true, false}, {40, false, true}, {40, true, false}} {
		if got := distinctKeys(many(tc.n, tc.dup)); got != tc.want {
			t.Errorf("distinctKeys(%d keys, repeated %v) = %v, want %v", tc.n, tc.dup, got, tc.want)
		}
	}
}
