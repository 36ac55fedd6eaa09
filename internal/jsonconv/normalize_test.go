package jsonconv

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type pair struct {
	A int    `json:"a"`
	B string `json:"b,omitempty"`
}

func TestNormalizeIsWhatJSONReadsBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"nil", nil},
		{"bool", true},
		{"string", "héllo"},
		{"invalid UTF-8", "a\xffb"},
		{"float64", 1.5},
		{"int", 42},
		{"large int64", int64(math.MaxInt64)},
		{"int32", int32(-7)},
		{"uint8", uint8(200)},
		{"float32", float32(0.1)},
		{"json.Number", json.Number("12.50")},
		{"struct", pair{A: 1}},
		{"pointer", &pair{A: 2, B: "x"}},
		{"typed slice", []int{1, 2}},
		{"bytes", []byte("hi")},
		{"typed map", map[string]int{"z": 1, "a": 2}},
		{"nested", map[string]any{"l": []any{1, "x", map[string]any{"k": float32(2.5)}}, "ok": 1.0}},
		{"invalid UTF-8 key", map[string]any{"k\xfe": 1.0}},
		{"raw JSON", json.RawMessage(`{"a":[1,2]}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Normalize(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ToAny(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Normalize(%#v) differs from the JSON round trip (-want +got):\n%s", tc.v, d)
			}
		})
	}
}

func TestNormalizeKeepsJSONFormValues(t *testing.T) {
	l := []any{1.0, "x", []any{true}, map[string]any{"k": nil}}
	got, err := Normalize(l)
	if err != nil {
		t.Fatal(err)
	}
	if g := got.([]any); &g[0] != &l[0] {
		t.Error("a list already in JSON form was copied")
	}
	// A list with one value to convert is copied; the original is intact.
	l2 := []any{1.0, 2}
	got, err = Normalize(l2)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]any{1.0, 2.0}, got); d != "" || l2[1] != 2 {
		t.Errorf("got %v, original %v", got, l2)
	}
	m := map[string]any{"a": 1.0, "b": 2}
	got, err = Normalize(m)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]any{"a": 1.0, "b": 2.0}, got); d != "" || m["b"] != 2 {
		t.Errorf("got %v, original %v", got, m)
	}
}

func TestNormalizeRefusesWhatJSONCannotHold(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(-1), float32(math.Inf(1)), []any{1.0, math.NaN()}, map[string]any{"c": make(chan int)}, func() {}} {
		if _, err := Normalize(v); err == nil {
			t.Errorf("Normalize(%T) succeeded, want the encoder's error", v)
		}
	}
}

func TestPlainKey(t *testing.T) {
	for k, want := range map[string]bool{
		"": true, "abc_1": true, "héllo": true, "数": true, "a b": true,
		"a<b": false, "a>": false, "&": false, `a"b`: false, `a\b`: false, "a\nb": false,
		"\u2028": false, "\u2029x": false, "a\xff": false,
	} {
		if got := PlainKey(k); got != want {
			t.Errorf("PlainKey(%q) = %v, want %v", k, got, want)
		}
		if want {
			b, _ := json.Marshal(k)
			if string(b) != `"`+k+`"` {
				t.Errorf("PlainKey(%q) is true but encoding/json writes %s", k, b)
			}
		}
	}
}
