package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ilmek-go/ilmek/runtime/internal/hexid"
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

// TestMemoryKeepsExecutorIDs checks the ids Memory keeps without their
// bytes (an executor's id of the entry's time stamp, a reference to an
// entry) against ids it copies: each reads back as written, by Get, List
// and after Prune rebuilt the entries.
func TestMemoryKeepsExecutorIDs(t *testing.T) {
	ctx := t.Context()
	base := time.Date(2026, 12, 4, 10, 0, 0, 5, time.UTC)
	hexID := func(ns int64, n uint32) string { return fmt.Sprintf("%016x%08x", ns, n) }
	m := NewMemory(Compact(Compaction{Every: 5}))
	var want []*Checkpoint
	for i := range 60 {
		at := base.Add(time.Duration(i) * time.Millisecond)
		cp := &Checkpoint{ID: hexID(at.UnixNano(), uint32(i)), ThreadID: "t", Step: i, Created: at, Fingerprint: "fp"}
		switch i % 8 {
		case 1: // the id's time is not the time stamp
			cp.ID = hexID(at.UnixNano()+1, uint32(i))
		case 2: // not lowercase
			cp.ID = strings.ToUpper(cp.ID)
		case 3: // a time before 1970 spelled in 16 digits
			cp.ID = "f" + cp.ID[1:]
		case 4: // a time stamp kept whole
			cp.Created = at.In(time.FixedZone("CET", 3600))
		case 5: // no time stamp
			cp.Created = time.Time{}
			cp.ID = hexID(0, uint32(i))
		case 6: // too short, too long
			cp.ID = cp.ID[:23]
		case 7:
			cp.ID += "0"
		}
		cp.PlanID = cp.ID
		d := Delta{Writes: []ChannelWrite{{Channel: "n", Value: json.RawMessage(itoa(i))}}}
		if i > 0 {
			cp.ParentID, d.Base = want[i-1].ID, want[i-1].ID
			switch i % 6 {
			case 1: // a pause: the plan made before
				cp.PlanID = want[i-1].PlanID
			case 2: // a fork of an older checkpoint
				cp.ParentID, d.Base = want[i-2].ID, want[i-2].ID
			case 3: // a delta of a checkpoint that is not its parent
				d.Base = want[i-3].ID
			case 4: // the plan of the parent
				cp.PlanID = cp.ParentID
			}
		}
		full := *cp
		full.Channels = json.RawMessage(`{"n":` + itoa(i) + `}`)
		var err error
		if i == 0 {
			err = m.Put(ctx, &full, nil)
		} else {
			// The ids handed over are new strings: Memory compares them
			// by their bytes, not only by their pointers.
			cp.ParentID, cp.PlanID, d.Base = strings.Clone(cp.ParentID), strings.Clone(cp.PlanID), strings.Clone(d.Base)
			err = m.PutDelta(ctx, cp, d, nil)
		}
		if err != nil {
			t.Fatalf("checkpoint %d: %v", i, err)
		}
		want = append(want, &full)
	}
	check := func(when string) {
		t.Helper()
		found := 0
		for i := range want {
			got, err := m.Get(ctx, "t", want[i].ID)
			if errors.Is(err, ErrNotFound) && when == "pruned" {
				continue
			}
			if err != nil {
				t.Fatalf("%s: checkpoint %d: %v", when, i, err)
			}
			found++
			if !reflect.DeepEqual(got, want[i]) {
				t.Errorf("%s: checkpoint %d:\n got %+v\nwant %+v", when, i, got, want[i])
			}
		}
		all, err := m.List(ctx, "t", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != found || found < 20 || (when == "pruned" && found == len(want)) {
			t.Fatalf("%s: %d checkpoints listed, %d found of %d", when, len(all), found, len(want))
		}
		for _, c := range all {
			if c.ID == "" || c.PlanID == "" || (c.Step > 0 && c.ParentID == "") {
				t.Errorf("%s: listed %+v without its ids", when, c)
			}
		}
	}
	check("written")
	// Both forms and copies are in use (the test tests what it means to).
	th := m.threads["t"]
	forms := map[uint32]int{}
	for i := range th.n {
		e := th.at(i)
		x := th.extra(e)
		for _, s := range []span{e.id, e.parent, x.plan, x.base} {
			switch {
			case s.n >= idRef:
				forms[s.n]++
			case s.n > 0:
				forms[0]++
			}
		}
	}
	if forms[idOwn] == 0 || forms[idRef] == 0 || forms[0] == 0 {
		t.Fatalf("ids kept: %d own, %d references, %d spans of bytes; want some of each", forms[idOwn], forms[idRef], forms[0])
	}
	if _, err := m.Prune(ctx, "t", PruneOptions{KeepLast: 20}); err != nil {
		t.Fatal(err)
	}
	check("pruned")
}

// TestParseID checks that hexid.Parse reads exactly the ids the executor
// spells (and idOf spells them back).
func TestParseID(t *testing.T) {
	for _, c := range []struct {
		id string
		ns int64
		n  uint32
		ok bool
	}{
		{"0000000000000000" + "00000000", 0, 0, true},
		{"187e0a3c5b2d4f10" + "0000002a", 0x187e0a3c5b2d4f10, 42, true},
		{"7fffffffffffffff" + "ffffffff", 1<<63 - 1, 1<<32 - 1, true},
		{"8000000000000000" + "00000001", 0, 0, false}, // a negative time
		{"187E0A3C5B2D4F10" + "0000002a", 0, 0, false},
		{"187e0a3c5b2d4f1" + "0000002a", 0, 0, false},
		{"187e0a3c5b2d4f10" + "0000002a0", 0, 0, false},
		{"187e0a3c5b2d4f1g" + "0000002a", 0, 0, false},
		{"", 0, 0, false},
	} {
		ns, n, ok := hexid.Parse(c.id)
		if ok != c.ok || (ok && (ns != c.ns || n != c.n)) {
			t.Errorf("hexid.Parse(%q) = %x, %x, %v; want %x, %x, %v", c.id, ns, n, ok, c.ns, c.n, c.ok)
		}
		if !ok {
			continue
		}
		th := &memThread{}
		if got := th.idOf(&memCP{id: span{n, idOwn}, created: ns}); got != c.id {
			t.Errorf("idOf(%x, %x) = %q, want %q", ns, n, got, c.id)
		}
	}
}

// TestMemoryEntrySize checks that an entry stays 96 bytes: its blocks
// (blockFirst << k entries) then fill size classes of the allocator
// (768 bytes to 24 KiB) without slack.
func TestMemoryEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(memCP{}); n != 96 {
		t.Errorf("memCP is %d bytes, want 96", n)
	}
}

// TestMemoryChainReadAllocations checks that rebuilding the channels at
// the end of a long chain of one-write deltas (a read, or a compaction)
// does not allocate per delta.
func TestMemoryChainReadAllocations(t *testing.T) {
	ctx := t.Context()
	m := NewMemory(Compact(Compaction{Every: 100000, Bytes: 1 << 30}))
	const n = 500
	prev := ""
	for i := range n {
		cp := &Checkpoint{ID: "c" + itoa(i), ParentID: prev, ThreadID: "t", PlanID: "c" + itoa(i), Created: time.Unix(0, int64(i)).UTC()}
		var err error
		if i == 0 {
			cp.Channels = json.RawMessage(`{"l":[0]}`)
			err = m.Put(ctx, cp, nil)
		} else {
			err = m.PutDelta(ctx, cp, Delta{Base: prev, Writes: []ChannelWrite{{Channel: "l", Append: true, Value: json.RawMessage(`[` + itoa(i) + `]`)}}}, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		prev = cp.ID
	}
	got, err := m.Get(ctx, "t", prev)
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ L []int }
	if err := json.Unmarshal(got.Channels, &st); err != nil || len(st.L) != n || st.L[n-1] != n-1 {
		t.Fatalf("channels %.80s…: %v; want a list of %d", got.Channels, err, n)
	}
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := m.Get(ctx, "t", prev); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > n/10 {
		t.Errorf("reading the end of a chain of %d deltas: %.0f allocations, want fewer than %d", n, allocs, n/10)
	}
}
