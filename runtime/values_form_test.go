package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

type formRequest struct {
	Model  string `json:"model"`
	Tokens int    `json:"tokens"`
}

// TestValuesKeepTheirFormAcrossACheckpoint: a spec-built or code-built
// graph shows a node each channel in its JSON form (map[string]any, []any,
// float64...), whether the value was written in the same run or restored
// from a checkpoint after a pause, and whatever Go type the writer used.
func TestValuesKeepTheirFormAcrossACheckpoint(t *testing.T) {
	// seen holds what each reading saw, one string per reading (look and
	// ask run concurrently).
	var (
		mu   sync.Mutex
		seen []string
	)
	look := func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
		var parts []string
		for _, ch := range []string{"req", "items", "meta", "n"} {
			parts = append(parts, fmt.Sprintf("%s %T %v", ch, s[ch], s[ch]))
		}
		mu.Lock()
		seen = append(seen, strings.Join(parts, "; "))
		mu.Unlock()
		return nil, nil
	}
	build := func(pause bool) *runtime.Graph[runtime.Values, runtime.Values] {
		b := runtime.NewBuilder("form").
			Channel("req", spec.LastWrite).Channel("items", spec.Append).Channel("meta", spec.Merge).Channel("n", spec.LastWrite).
			Node("write", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
				return runtime.Values{
					"req":   formRequest{Model: "chat-large", Tokens: 3},
					"items": []int{1, 2},
					"meta":  map[string]any{"by": []string{"a"}, "n": int64(7)},
					"n":     float32(0.1),
				}, nil
			}).
			Node("look", look).
			Edge(spec.Start, "write").Edge("write", "look")
		if pause {
			b = b.Node("ask", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
				if _, err := look(ctx, s); err != nil {
					return nil, err
				}
				_, err := runtime.Interrupt[string](ctx, "ok?")
				return nil, err
			}).Edge("write", "ask")
		}
		g, err := b.Compile()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	want := []string{"req map[string]interface {} map[model:chat-large tokens:3]; " +
		"items []interface {} [1 2]; " +
		"meta map[string]interface {} map[by:[a] n:7]; " +
		"n float64 0.1"}

	// In one run, without a checkpointer.
	if _, err := build(false).Invoke(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, seen); d != "" {
		t.Errorf("a node reading what the superstep before wrote (-want +got):\n%s", d)
	}

	// Across a pause: ask reads the state in the run that wrote it, then
	// again when the resumed run restores it from the checkpoint.
	seen = nil
	g, cp := build(true), checkpoint.NewMemory()
	res, err := g.Thread(cp, "t").Invoke(context.Background(), nil)
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("first run: %s %v", res.Status, err)
	}
	if _, err := g.Thread(cp, "t").Resume(context.Background(), runtime.Answer("yes")); err != nil {
		t.Fatal(err)
	}
	// look and ask in the first run, and again in the resumed run, which
	// replays their superstep on the state restored from the checkpoint.
	var all []string
	for range 4 {
		all = append(all, want[0])
	}
	if d := cmp.Diff(all, seen); d != "" {
		t.Errorf("the same channels before and after the checkpoint (-want +got):\n%s", d)
	}
}

// TestUnencodableWriteFailsTheSuperstep: a value with no JSON form fails
// the superstep that wrote it, with or without a checkpointer.
func TestUnencodableWriteFailsTheSuperstep(t *testing.T) {
	for _, v := range []any{math.Inf(1), make(chan int)} {
		g, err := runtime.NewBuilder("bad").Channel("x", spec.LastWrite).
			Node("w", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"x": v}, nil }).
			Edge(spec.Start, "w").Compile()
		if err != nil {
			t.Fatal(err)
		}
		_, err = g.Invoke(context.Background(), nil)
		var ce *runtime.ChannelError
		var re *runtime.ReduceError
		if !errors.As(err, &re) || !errors.As(err, &ce) || ce.Channel != "x" {
			t.Errorf("writing a %T: err %v, want a ReduceError with a ChannelError on x", v, err)
		}
	}
}
