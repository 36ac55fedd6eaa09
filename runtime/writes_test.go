package runtime

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/internal/testhook"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// writesGraph is the untyped program of a graph with one channel of each
// reducer, for the WriteEncoder tests.
func writesGraph(t *testing.T) *untyped {
	t.Helper()
	g, err := NewBuilder("writes").
		Channel("last", spec.LastWrite).Channel("log", spec.Append).Channel("meta", spec.Merge).
		ChannelFunc("sum", func(cur, in any) (any, error) {
			f, _ := cur.(float64)
			g, _ := in.(float64)
			return f + g, nil
		}).
		Node("a", func(*Ctx, Values) (Values, error) { return nil, nil }).
		Edge(spec.Start, "a").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g.p.(*untyped)
}

func TestUntypedEncodeWrites(t *testing.T) {
	p := writesGraph(t)
	base := Values{"last": "x", "log": []any{"m1"}, "meta": map[string]any{"a": 1.0, "c": 3.0}, "sum": 1.0}
	for _, tc := range []struct {
		name    string
		prev    Values
		updates []Values
		ok      bool
		kinds   string // one letter per write: v(alue), a(ppend), m(erge)
	}{
		{"nothing written", base, nil, true, ""},
		{"last_write", base, []Values{{"last": map[string]any{"k": []any{1, "two"}}}}, true, "v"},
		{"last_write written for the first time", Values{"log": []any{}, "meta": map[string]any{}}, []Values{{"last": 1}}, false, ""},
		{"append to a list", base, []Values{{"log": "m2"}, {"log": []string{"m3", "m4"}}}, true, "a"},
		{"append to an empty list", Values{"log": []any{}, "meta": map[string]any{}}, []Values{{"log": "m1"}}, true, "v"},
		{"append nothing", base, []Values{{"log": []any{}}}, true, ""},
		{"merge new and changed keys", base, []Values{{"meta": map[string]any{"b": 2, "c": "three"}}, {"meta": Values{"d": nil}}}, true, "m"},
		{"merge into an empty object", Values{"log": []any{}, "meta": map[string]any{}}, []Values{{"meta": map[string]any{"a": 1}}}, true, "v"},
		{"merge a key the encoder escapes", base, []Values{{"meta": map[string]any{"a<b": 1}}}, true, "v"},
		{"merge nothing", base, []Values{{"meta": map[string]any{}}}, true, ""},
		{"custom reducer", base, []Values{{"sum": 2.0}}, true, "v"},
		{"every channel", base, []Values{{"last": nil, "log": 1, "meta": map[string]any{"z": true}, "sum": 0.5}}, true, "vamv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev, _, err := p.Reduce(p.Zero(), []Values{tc.prev})
			if err != nil {
				t.Fatal(err)
			}
			next, _, err := p.Reduce(prev, tc.updates)
			if err != nil {
				t.Fatal(err)
			}
			ws, ok, err := p.EncodeWrites(nil, &prev, &next, tc.updates)
			if err != nil || ok != tc.ok {
				t.Fatalf("EncodeWrites: ok %v, err %v; want ok %v", ok, err, tc.ok)
			}
			if !ok {
				return
			}
			var kinds strings.Builder
			for _, w := range ws {
				switch {
				case w.Append:
					kinds.WriteByte('a')
				case w.Merge:
					kinds.WriteByte('m')
				default:
					kinds.WriteByte('v')
				}
			}
			if kinds.String() != tc.kinds {
				t.Errorf("writes %s: kinds %q, want %q", writesText(ws), kinds.String(), tc.kinds)
			}
			before, _ := p.EncodeState(prev)
			after, _ := p.EncodeState(next)
			got, err := checkpoint.ApplyDeltas(before, ws)
			if err != nil || !bytes.Equal(got, after) {
				t.Errorf("writes %s applied to %s give %s (%v), want %s", writesText(ws), before, got, err, after)
			}
		})
	}
}

// countingProgram counts the whole-state encodings of the program it wraps;
// lying drops every write the program encodes.
type countingProgram struct {
	*untyped
	encodes int
	lying   bool
}

func (c *countingProgram) EncodeState(s Values) ([]byte, error) {
	c.encodes++
	return c.untyped.EncodeState(s)
}

func (c *countingProgram) EncodeWrites(dst []checkpoint.ChannelWrite, prev, next *Values, updates []Values) ([]checkpoint.ChannelWrite, bool, error) {
	ws, ok, err := c.untyped.EncodeWrites(dst, prev, next, updates)
	if c.lying {
		ws = ws[:0]
	}
	return ws, ok, err
}

// loopGraph appends one short message to "log" for n supersteps beside a
// large, untouched "big" channel.
func loopGraph(t *testing.T, n int) *countingProgram {
	t.Helper()
	g, err := NewBuilder("loop").
		Channel("big", spec.LastWrite).Channel("log", spec.Append).
		Node("add", func(*Ctx, Values) (Values, error) { return Values{"log": "message"}, nil }).
		Edge(spec.Start, "add").
		EdgeIf("add", "add", func(s Values) bool { return len(s["log"].([]any)) < n }).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return &countingProgram{untyped: g.p.(*untyped)}
}

// TestCheckpointEncodesOnlyTheUpdate: on a backend that stores deltas, a
// superstep's checkpoint encodes what its updates wrote, never the whole
// state: a run of 20 supersteps over a 1 MB channel encodes the state once
// (the thread's first checkpoint, before the first superstep) and hands the backend a few dozen bytes
// per superstep.
func TestCheckpointEncodesOnlyTheUpdate(t *testing.T) {
	testhook.SetVerifyWrites(false) // the check encodes whole states
	t.Cleanup(func() { testhook.SetVerifyWrites(true) })
	p := loopGraph(t, 20)
	g, err := newGraph[Values, Values](p)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1<<20)
	var steps, maxBytes int
	for ev, err := range g.Thread(checkpoint.NewMemory(), "t").Stream(context.Background(), Values{"big": big}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == EventCheckpoint {
			steps++
			maxBytes = max(maxBytes, ev.Bytes)
		}
	}
	if steps != 20 || p.encodes != 1 {
		t.Fatalf("%d supersteps' checkpoints, %d whole-state encodings; want 20 and 1 (the thread's first checkpoint)", steps, p.encodes)
	}
	if maxBytes > 64 {
		t.Errorf("a superstep handed the backend %d bytes, want a delta of the appended message", maxBytes)
	}
	// Without deltas every checkpoint is whole.
	p.encodes = 0
	if _, err := g.Thread(fullOnly{checkpoint.NewMemory()}, "t").Invoke(context.Background(), Values{"big": "b"}); err != nil {
		t.Fatal(err)
	}
	if p.encodes != 21 {
		t.Errorf("a backend without deltas: %d whole-state encodings, want 21", p.encodes)
	}
}

// fullOnly hides Memory's PutDelta.
type fullOnly struct{ Checkpointer }

func TestVerifyWritesCatchesABrokenEncoder(t *testing.T) {
	p := loopGraph(t, 3)
	p.lying = true
	g, err := newGraph[Values, Values](p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Thread(checkpoint.NewMemory(), "t").Invoke(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "verify writes: the writes do not give the state after") {
		t.Fatalf("a WriteEncoder that drops writes: err %v, want the check's panic", err)
	}
}
