package runtime_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestDamagedDeltasMatchErrDelta pins the errors of a stored chain that
// does not fit: ApplyDeltas and RebuildChain refuse it with an error
// matching ErrDelta, and rebuild an intact chain byte for byte.
func TestDamagedDeltasMatchErrDelta(t *testing.T) {
	base := `{"log":["a"],"m":{"k":1},"x":1}`
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name   string
		base   string
		writes []checkpoint.ChannelWrite
		want   string // "": refused with ErrDelta
	}{
		{"intact", base, []checkpoint.ChannelWrite{{Channel: "log", Append: true, Value: raw(`["b"]`)}, {Channel: "m", Merge: true, Value: raw(`{"j":2}`)}, {Channel: "x", Value: raw(`2`)}},
			`{"log":["a","b"],"m":{"j":2,"k":1},"x":2}`},
		{"base not an object", `[1]`, nil, ""},
		{"channel not in the base", base, []checkpoint.ChannelWrite{{Channel: "y", Value: raw(`1`)}}, ""},
		{"append of a non-array", base, []checkpoint.ChannelWrite{{Channel: "log", Append: true, Value: raw(`"b"`)}}, ""},
		{"append to a non-array", base, []checkpoint.ChannelWrite{{Channel: "x", Append: true, Value: raw(`[2]`)}}, ""},
		{"merge of a non-object", base, []checkpoint.ChannelWrite{{Channel: "m", Merge: true, Value: raw(`[1]`)}}, ""},
		{"merge into a non-object", base, []checkpoint.ChannelWrite{{Channel: "log", Merge: true, Value: raw(`{"j":2}`)}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := checkpoint.ApplyDeltas([]byte(tc.base), tc.writes)
			if tc.want == "" {
				if !errors.Is(err, checkpoint.ErrDelta) {
					t.Fatalf("ApplyDeltas = %s, %v; want an error matching ErrDelta", got, err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("ApplyDeltas = %s, %v; want %s", got, err, tc.want)
			}
		})
	}

	// A chain: snapshot s, delta d1 on s, and the checkpoint's own writes
	// on d1.
	d1, _ := json.Marshal([]checkpoint.ChannelWrite{{Channel: "log", Append: true, Value: raw(`["b"]`)}})
	own, _ := json.Marshal([]checkpoint.ChannelWrite{{Channel: "x", Value: raw(`3`)}})
	chain := map[string]checkpoint.ChainLink{"s": {Channels: []byte(base)}, "d1": {Base: "s", Channels: d1}, "other": {Base: "s", Channels: d1}}
	if got, err := checkpoint.RebuildChain(own, "d1", chain); err != nil || string(got) != `{"log":["a","b"],"m":{"k":1},"x":3}` {
		t.Errorf("RebuildChain = %s, %v", got, err)
	}
	for name, c := range map[string]struct {
		own   []byte
		chain map[string]checkpoint.ChainLink
	}{
		"a missing link":            {own, map[string]checkpoint.ChainLink{"d1": chain["d1"]}},
		"undecodable":               {[]byte(`{`), chain},
		"a loop":                    {own, map[string]checkpoint.ChainLink{"d1": {Base: "d1", Channels: d1}}},
		"a delta that does not fit": {[]byte(`[{"c":"nope","v":1}]`), chain},
	} {
		if got, err := checkpoint.RebuildChain(c.own, "d1", c.chain); !errors.Is(err, checkpoint.ErrDelta) {
			t.Errorf("%s: RebuildChain = %s, %v; want an error matching ErrDelta", name, got, err)
		}
	}
}
