package checkpoint

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestMemoryKeepsEveryField checks that what Memory keeps of a checkpoint
// in its entries (spans of a byte arena, extras for the rest) reads back
// as it was written, snapshot and delta, across many entry blocks.
func TestMemoryKeepsEveryField(t *testing.T) {
	ctx := t.Context()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CET", 3600)
	}
	base := time.Date(2026, 12, 4, 10, 0, 0, 5, time.UTC)
	m := NewMemory(Compact(Compaction{Every: 7}))
	var want []*Checkpoint
	for i := range 600 {
		cp := &Checkpoint{ID: "cp" + itoa(i), ThreadID: "t", Step: i, PlanID: "cp" + itoa(i), Fingerprint: "fp", Format: 1,
			Created: base.Add(time.Duration(i) * time.Second)}
		if i > 0 {
			cp.ParentID = want[i-1].ID
		}
		switch i % 5 {
		case 0:
			cp.Next = []TaskRef{{Node: "a", Key: "a"}}
		case 1:
			cp.Next = []TaskRef{{Node: "a", Key: "a:1"}, {Node: "b", Key: "b"}}
			cp.Created = cp.Created.In(paris)
		case 2:
			cp.Next = []TaskRef{{Node: "s", Key: "s", Input: json.RawMessage(`{"x":1}`), Journal: []JournalEntry{{Key: "step#0", Value: json.RawMessage(`2`)}}}}
			cp.Pending = []PendingInterrupt{{ID: "s:interrupt#0", Key: "interrupt#0", Node: "s", Payload: json.RawMessage(`"?"`)}}
			cp.PlanID = want[i-1].PlanID
		case 3:
			cp.Created = time.Now() // with a monotonic reading
			cp.MigratedFrom, cp.Fingerprint = "old", "new"
		case 4:
			cp.Created = time.Time{}
		}
		full := *cp
		full.Channels = json.RawMessage(`{"n":` + itoa(i) + `,"l":[` + itoa(i) + `]}`)
		if i == 0 {
			if err := m.Put(ctx, &full, nil); err != nil {
				t.Fatal(err)
			}
		} else {
			d := Delta{Base: cp.ParentID, Writes: []ChannelWrite{{Channel: "n", Value: json.RawMessage(itoa(i))}}}
			if i%2 == 0 {
				d.Writes = append(d.Writes, ChannelWrite{Channel: "l", Value: json.RawMessage(`[` + itoa(i) + `]`)})
			} else {
				full.Channels = json.RawMessage(`{"n":` + itoa(i) + `,"l":[` + itoa(i-1) + `]}`)
			}
			if err := m.PutDelta(ctx, cp, d, nil); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, &full)
	}
	for _, i := range []int{0, 1, 2, 3, 4, 5, 7, 8, 300, 598, 599} {
		got, err := m.Get(ctx, "t", want[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		w := *want[i]
		if i%5 == 3 {
			w.Created = w.Created.Round(0) // the monotonic reading is not kept
			if !got.Created.Equal(w.Created) {
				t.Errorf("checkpoint %d: created %v, want %v", i, got.Created, w.Created)
			}
			got.Created = w.Created
		}
		if !reflect.DeepEqual(got, &w) {
			t.Errorf("checkpoint %d:\n got %+v\nwant %+v", i, got, &w)
		}
	}
}

func itoa(i int) string { return string(json.RawMessage(mustMarshal(i))) }

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestMemoryLeaseWritesAfterPrune checks that a lease, which holds its
// thread's entries once it wrote, still writes to the thread after Prune
// rebuilt them.
func TestMemoryLeaseWritesAfterPrune(t *testing.T) {
	ctx := t.Context()
	m := NewMemory()
	l, err := m.Lease(ctx, "t", LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	prev := ""
	for i := range 5 {
		cp := &Checkpoint{ID: "c" + itoa(i), ParentID: prev, ThreadID: "t", PlanID: "c" + itoa(i), Created: time.Now().UTC(), Channels: json.RawMessage(`{"n":` + itoa(i) + `}`)}
		c := Commit{Checkpoint: cp}
		if prev != "" {
			cp.Channels = nil
			c.Delta = &Delta{Base: prev, Writes: []ChannelWrite{{Channel: "n", Value: json.RawMessage(itoa(i))}}}
		}
		if err := l.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		prev = cp.ID
		if i == 2 {
			if _, err := m.Prune(ctx, "t", PruneOptions{KeepLast: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := m.Get(ctx, "t", "")
	if err != nil || got.ID != "c4" || string(got.Channels) != `{"n":4}` {
		t.Fatalf("latest after a prune: %+v, %v; want c4 with n 4", got, err)
	}
	if all, _ := m.List(ctx, "t", 0); len(all) != 3 {
		t.Errorf("%d checkpoints, want 3 (the one Prune kept, two after)", len(all))
	}
}

// TestPlainTimeYears checks plainTime's bounds: UTC time stamps without a
// monotonic reading from 1679 to the end of 2261, as Year tells them.
func TestPlainTimeYears(t *testing.T) {
	byYear := func(c time.Time) bool {
		return c.Location() == time.UTC && c == c.Round(0) && c.Year() > 1678 && c.Year() < 2262
	}
	paris := time.FixedZone("CET", 3600)
	for _, c := range []time.Time{
		{},
		time.Date(1678, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1679, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1679, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(2026, 12, 4, 10, 0, 0, 5, time.UTC),
		time.Date(2261, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 4, 10, 0, 0, 5, paris),
		time.Date(2026, 12, 4, 10, 0, 0, 5, time.UTC).In(time.Local),
		time.Now(),
		time.Now().UTC(),
		time.Now().UTC().Round(0),
	} {
		if got, want := plainTime(c), byYear(c); got != want {
			t.Errorf("plainTime(%v) = %v, want %v", c, got, want)
		}
	}
}
