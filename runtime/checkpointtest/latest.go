package checkpointtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var latestContracts = []contract{
	{"GetLatestWithoutKnownChannels", testGetLatest},
	{"LargeChannelsRoundTrip", testLargeChannels},
}

// latestReader returns cp as a checkpoint.LatestReader, or skips.
func latestReader(t *testing.T, cp runtime.Checkpointer) checkpoint.LatestReader {
	t.Helper()
	lr, ok := cp.(checkpoint.LatestReader)
	if !ok {
		t.Skip("the backend reads the latest checkpoint with Get only (no checkpoint.LatestReader)")
	}
	return lr
}

// getLatest is GetLatest that fails t on an error.
func getLatest(t *testing.T, lr checkpoint.LatestReader, thread, known string) *runtime.Checkpoint {
	t.Helper()
	c, err := lr.GetLatest(t.Context(), thread, known)
	if err != nil {
		t.Fatalf("GetLatest(%q, known %q): %v", thread, known, err)
	}
	return c
}

// testGetLatest checks GetLatest against Get: the same checkpoint, with
// its channels unless they are known, for a snapshot and a delta as the
// latest, and ErrNotFound for a thread with none.
func testGetLatest(t *testing.T, cp runtime.Checkpointer) {
	lr := latestReader(t, cp)
	if _, err := lr.GetLatest(t.Context(), "none", "x"); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("GetLatest of a thread with no checkpoint: %v, want ErrNotFound", err)
	}
	root := put(t, cp, mk("t", "", 0))
	c := put(t, cp, rich("t", root.ID))
	check := func(latest *runtime.Checkpoint) {
		t.Helper()
		for _, known := range []string{"", root.ID, "not-an-id"} {
			sameCheckpoint(t, latest, getLatest(t, lr, "t", known))
		}
		got := getLatest(t, lr, "t", latest.ID)
		if got.Channels != nil {
			t.Errorf("GetLatest with its own id known: channels %s, want none", got.Channels)
		}
		got.Channels = latest.Channels
		sameCheckpoint(t, latest, got)
	}
	check(get(t, cp, "t", c.ID))
	dc, ok := cp.(checkpoint.DeltaCheckpointer)
	if !ok {
		return
	}
	base := putLogBase(t, cp, "t")
	d := putLog(t, dc, "t", base.ID, 1)
	d = putLog(t, dc, "t", d.ID, 2)
	check(get(t, cp, "t", d.ID))
}

// bigChannels returns channels of about n bytes: a list of messages.
func bigChannels(n, msgs int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	for i := range msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q", fmt.Sprintf("message %d %s", i, strings.Repeat("x", n/msgs)))
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String())
}

// testLargeChannels stores checkpoints whose channels are larger than a
// database page, in full and as deltas of them, among small ones, and
// reads them back every way; pruning and deleting them leave the others.
func testLargeChannels(t *testing.T, cp runtime.Checkpointer) {
	ctx := t.Context()
	small := put(t, cp, mk("t", "", 0))
	big := mk("t", small.ID, 1)
	big.Channels = bigChannels(20000, 40)
	put(t, cp, big)
	want := []*runtime.Checkpoint{small, big}
	if dc, ok := cp.(checkpoint.DeltaCheckpointer); ok {
		// A large delta of the large snapshot, and a small one of that.
		prev := big.Channels
		for i, n := range []int{3000, 10} {
			c := mk("t", want[len(want)-1].ID, 2+i)
			c.Channels = nil
			add := bigChannels(n, 2)
			var msgs struct{ Messages []string }
			if err := json.Unmarshal(add, &msgs); err != nil {
				t.Fatal(err)
			}
			v, _ := json.Marshal(msgs.Messages)
			d := checkpoint.Delta{Base: want[len(want)-1].ID, Writes: []checkpoint.ChannelWrite{{Channel: "messages", Append: true, Value: v}}}
			if err := dc.PutDelta(ctx, c, d, nil); err != nil {
				t.Fatal(err)
			}
			full, err := checkpoint.ApplyDeltas(append([]byte(nil), prev...), d.Writes)
			if err != nil {
				t.Fatal(err)
			}
			c.Channels, prev = full, full
			want = append(want, c)
		}
	}
	after := mk("t", want[len(want)-1].ID, 9)
	after.Channels = bigChannels(5000, 5)
	put(t, cp, after)
	want = append(want, after)
	other := put(t, cp, mk("other", "", 0))
	for _, w := range want {
		sameCheckpoint(t, w, get(t, cp, "t", w.ID))
	}
	sameCheckpoint(t, after, get(t, cp, "t", ""))
	all, err := cp.List(ctx, "t", 0)
	if err != nil || len(all) != len(want) {
		t.Fatalf("List: %d checkpoints, %v; want %d", len(all), err, len(want))
	}
	for i, w := range want {
		sameCheckpoint(t, w, all[len(all)-1-i])
	}
	if p, ok := cp.(checkpoint.Pruner); ok {
		// Keeping the last two leaves a delta whose base goes: it is
		// stored in full again.
		if _, err := p.Prune(ctx, "t", checkpoint.PruneOptions{KeepLast: 2}); err != nil {
			t.Fatal(err)
		}
		for _, w := range want[len(want)-2:] {
			sameCheckpoint(t, w, get(t, cp, "t", w.ID))
		}
	}
	if err := cp.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Get(ctx, "t", ""); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Get after DeleteThread: %v, want ErrNotFound", err)
	}
	sameCheckpoint(t, other, get(t, cp, "other", ""))
}
