package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestMemoryStoresDeltas checks that a chat thread's supersteps reach the
// backend as deltas of one message (the store's compaction is tested in
// package checkpoint).
func TestMemoryStoresDeltas(t *testing.T) {
	g, err := NewBuilder("chat").Channel("messages", spec.Append).
		Node("say", func(*Ctx, Values) (Values, error) { return Values{"messages": "hello"}, nil }).
		Edge(spec.Start, "say").Edge("say", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	m := &deltaRecorder{Memory: checkpoint.NewMemory(checkpoint.Compact(checkpoint.Compaction{Every: 10}))}
	for i := 0; i < 50; i++ {
		if _, err := g.Thread(m, "t").Invoke(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}
	maxDelta := 0
	for _, d := range m.deltas {
		if n := len(d.Writes); n > 1 {
			t.Fatalf("delta on %s: %d writes, want at most one", d.Base, n)
		}
		for _, w := range d.Writes {
			maxDelta = max(maxDelta, len(w.Value))
		}
	}
	if len(m.deltas) < 40 {
		t.Errorf("%d of 50 runs' checkpoints reached the store as deltas", len(m.deltas))
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
	m := &deltaRecorder{Memory: checkpoint.NewMemory()}
	for i := 0; i < 60; i++ {
		if _, err := g.Thread(m, "t").Invoke(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}
	merges := 0
	for _, d := range m.deltas {
		for _, w := range d.Writes {
			if w.Channel == "facts" {
				if !w.Merge || len(w.Value) > 80 {
					t.Fatalf("the delta on %s writes facts as %s (merge %t), want only the merged key", d.Base, w.Value, w.Merge)
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

// deltaRecorder is a Memory that keeps the deltas handed to it.
type deltaRecorder struct {
	*checkpoint.Memory
	deltas []checkpoint.Delta
}

func (r *deltaRecorder) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l, err := r.Memory.Lease(ctx, thread, opts)
	if err != nil {
		return nil, err
	}
	return &deltaLease{Lease: l, r: r}, nil
}

// deltaLease records the deltas committed through it in its deltaRecorder.
type deltaLease struct {
	checkpoint.Lease
	r *deltaRecorder
}

func (l *deltaLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	if c.Delta != nil {
		// The run reuses its buffers: keep a copy.
		ws := make([]checkpoint.ChannelWrite, len(c.Delta.Writes))
		for i, w := range c.Delta.Writes {
			w.Value = bytes.Clone(w.Value)
			ws[i] = w
		}
		l.r.deltas = append(l.r.deltas, checkpoint.Delta{Base: c.Delta.Base, Writes: ws})
	}
	return l.Lease.Commit(ctx, c)
}
