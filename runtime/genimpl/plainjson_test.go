package genimpl

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

func TestPlainJSONIsMarshal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     any
		plain bool // plainJSON encodes it itself
	}{
		{"int", 42, true},
		{"negative int", -7, true},
		{"min int64", int64(math.MinInt64), true},
		{"int32", int32(-3), true},
		{"uint", uint(9), true},
		{"max uint64", uint64(math.MaxUint64), true},
		{"true", true, true},
		{"plain string", "hello, world ~", true},
		{"empty string", "", true},
		{"ints", []int{1, -2, 3}, true},
		{"empty ints", []int{}, true},
		{"nil ints", []int(nil), true},
		{"int64s", []int64{5}, true},
		{"bools", []bool{true, false}, true},
		{"strings", []string{"a", "b c"}, true},
		{"nil strings", []string(nil), true},
		{"quote", `say "hi"`, false},
		{"backslash", `a\b`, false},
		{"html", "<b>&</b>", false},
		{"newline", "a\nb", false},
		{"non-ASCII", "çay", false},
		{"invalid UTF-8", "\xff", false},
		{"a list with a string to escape", []string{"ok", "<"}, false},
		{"float", 1.5, false},
		{"map", map[string]int{"a": 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := plainJSON(nil, tc.v)
			if ok != tc.plain {
				t.Fatalf("plainJSON(%#v) ok = %v, want %v", tc.v, ok, tc.plain)
			}
			if ok && string(got) != string(want) {
				t.Errorf("plainJSON(%#v) = %s, json.Marshal %s", tc.v, got, want)
			}
			w := NewWrites(nil)
			addValue(&w, checkpoint.ChannelWrite{Channel: "c"}, tc.v)
			ws, _, err := w.Done()
			if err != nil || len(ws) != 1 || string(ws[0].Value) != string(want) {
				t.Errorf("addValue(%#v) = %+v, %v; want %s", tc.v, ws, err, want)
			}
		})
	}
}

func TestAppendOfIntsAllocatesOnlyItsBytes(t *testing.T) {
	prev, next := []int{1, 2}, []int{1, 2, 3}
	dst := make([]checkpoint.ChannelWrite, 0, 4)
	allocs := testing.AllocsPerRun(100, func() {
		w := NewWrites(dst)
		Append(&w, "items", prev, next)
		LastWrite(&w, "counter", true, true, &prev[0])
	})
	if allocs > 2 {
		t.Errorf("an append of ints and a last write of an int: %v allocations, want 2 (their encodings)", allocs)
	}
}
