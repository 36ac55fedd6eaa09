package checkpoint

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestMemoryCompacts checks that a chain of one-message deltas is stored
// with a snapshot every Compaction.Every of them, and reads back whole.
func TestMemoryCompacts(t *testing.T) {
	m := NewMemory(Compact(Compaction{Every: 10}))
	ctx := t.Context()
	prev := &Checkpoint{ID: fmt.Sprintf("%04d", 0), ThreadID: "t", Channels: json.RawMessage(`{"messages":["m0"]}`), Created: time.Now()}
	if err := m.Put(ctx, prev, nil); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 50; i++ {
		cp := &Checkpoint{ID: fmt.Sprintf("%04d", i), ParentID: prev.ID, ThreadID: "t", Created: time.Now()}
		d := Delta{Base: prev.ID, Writes: []ChannelWrite{{Channel: "messages", Append: true, Value: json.RawMessage(fmt.Sprintf(`["m%d"]`, i))}}}
		if err := m.PutDelta(ctx, cp, d, nil); err != nil {
			t.Fatal(err)
		}
		prev = cp
	}
	snaps := 0
	th := m.threads["t"]
	for i := range th.n {
		if th.snapshot(th.at(i)) {
			snaps++
		}
	}
	if n := th.n; snaps < n/10 || snaps > n/10+2 {
		t.Errorf("%d snapshots among %d checkpoints, want one about every 10", snaps, n)
	}
	latest, err := m.Get(ctx, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Messages []string }
	if err := json.Unmarshal(latest.Channels, &st); err != nil || len(st.Messages) != 50 || st.Messages[49] != "m49" {
		t.Fatalf("the latest checkpoint holds %v (%v)", st.Messages, err)
	}
}
