package genimpl_test

import (
	"encoding/json"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/genimpl"
)

// upd is an update of a state with an append and a merge channel.
type upd struct {
	list []string
	m    map[string]int
}

func TestWritesApplyToTheFullEncoding(t *testing.T) {
	for _, tc := range []struct {
		name             string
		prevL, nextL     []string
		prevM, nextM     map[string]int
		updates          []upd
		appends, merges  int
		wantWritesByName []string
	}{
		{name: "nothing", prevL: []string{"a"}, nextL: []string{"a"}, prevM: map[string]int{"k": 1}, nextM: map[string]int{"k": 1}, updates: []upd{{}}},
		{name: "append", prevL: []string{"a"}, nextL: []string{"a", "b", "c"}, prevM: map[string]int{}, nextM: map[string]int{}, updates: []upd{{list: []string{"b", "c"}}}, appends: 1, wantWritesByName: []string{"l"}},
		{name: "first elements", prevL: nil, nextL: []string{"a"}, updates: []upd{{list: []string{"a"}}}, wantWritesByName: []string{"l"}},
		{name: "merge", prevL: []string{}, nextL: []string{}, prevM: map[string]int{"a": 1, "c": 3}, nextM: map[string]int{"a": 1, "b": 2, "c": 4}, updates: []upd{{m: map[string]int{"b": 2}}, {m: map[string]int{"c": 4}}}, merges: 1, wantWritesByName: []string{"m"}},
		{name: "merge into nothing", nextM: map[string]int{"a": 1}, updates: []upd{{m: map[string]int{"a": 1}}}, wantWritesByName: []string{"m"}},
		{name: "merge an escaped key", prevM: map[string]int{"a": 1}, nextM: map[string]int{"a": 1, "<": 2}, updates: []upd{{m: map[string]int{"<": 2}}}, wantWritesByName: []string{"m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := genimpl.NewWrites(nil)
			genimpl.Append(&w, "l", tc.prevL, tc.nextL)
			genimpl.Merge(&w, "m", tc.prevM, tc.nextM, tc.updates, func(u *upd) map[string]int { return u.m })
			ws, ok, err := w.Done()
			if err != nil || !ok {
				t.Fatalf("Done: %v %v", ok, err)
			}
			var names []string
			appends, merges := 0, 0
			for _, x := range ws {
				names = append(names, x.Channel)
				if x.Append {
					appends++
				}
				if x.Merge {
					merges++
				}
			}
			if len(names) != len(tc.wantWritesByName) || appends != tc.appends || merges != tc.merges {
				t.Fatalf("writes %+v: want channels %v, %d appends, %d merges", ws, tc.wantWritesByName, tc.appends, tc.merges)
			}
			full := func(l []string, m map[string]int) []byte {
				if l == nil {
					l = []string{}
				}
				if m == nil {
					m = map[string]int{}
				}
				b, _ := json.Marshal(struct {
					L []string       `json:"l"`
					M map[string]int `json:"m"`
				}{l, m})
				return b
			}
			got, err := checkpoint.ApplyDeltas(full(tc.prevL, tc.prevM), ws)
			if want := full(tc.nextL, tc.nextM); err != nil || string(got) != string(want) {
				t.Errorf("applied: %s (%v), want %s", got, err, want)
			}
		})
	}
}

func TestWritesKeepTheFirstEncodingError(t *testing.T) {
	w := genimpl.NewWrites(nil)
	w.Value("a", make(chan int))
	w.Value("b", 1)
	if _, ok, err := w.Done(); ok || err == nil {
		t.Fatalf("Done: ok %v err %v, want the encoding error", ok, err)
	}
}
