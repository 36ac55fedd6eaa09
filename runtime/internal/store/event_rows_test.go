package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// testRowBytes is the row size the tests pack to.
const testRowBytes = 16 << 10

// evs returns events from..to of run in thread, data {"seq":n} (size
// bytes of padding when size > 0), a second apart.
func evs(run, thread string, from, to int64, size int) []checkpoint.StoredEvent {
	var out []checkpoint.StoredEvent
	for s := from; s <= to; s++ {
		out = append(out, checkpoint.StoredEvent{RunID: run, Seq: s, ThreadID: thread, Time: time.Unix(1_800_000_000+s, int64(s)).UTC(),
			Kind: "custom", Data: []byte(fmt.Sprintf(`{"seq":%d,"pad":"%s"}`, s, strings.Repeat("x", size)))})
	}
	return out
}

// rowsOf returns packed rows as EventRow values.
func rowsOf(r EventRows) []EventRow {
	var out []EventRow
	for i := range r.Len() {
		out = append(out, r.Row(i))
	}
	return out
}

// TestPackEvents: a write's events share a row while they are of one run
// and thread, their Seqs follow each other and the row is within its
// limits; every row unpacks to exactly its events.
func TestPackEvents(t *testing.T) {
	cat := func(parts ...[]checkpoint.StoredEvent) []checkpoint.StoredEvent { return slices.Concat(parts...) }
	for _, c := range []struct {
		name   string
		events []checkpoint.StoredEvent
		skip   func(checkpoint.StoredEvent) bool
		want   [][2]int64 // each row's first and last Seq
	}{
		{"one event", evs("r", "t", 1, 1, 0), nil, [][2]int64{{1, 1}}},
		{"a superstep", evs("r", "t", 3, 7, 0), nil, [][2]int64{{3, 7}}},
		{"two runs", cat(evs("r", "t", 1, 3, 0), evs("s", "t", 4, 5, 0)), nil, [][2]int64{{1, 3}, {4, 5}}},
		{"two threads", cat(evs("r", "t", 1, 2, 0), evs("r", "u", 3, 4, 0)), nil, [][2]int64{{1, 2}, {3, 4}}},
		{"a gap", cat(evs("r", "t", 1, 2, 0), evs("r", "t", 4, 5, 0)), nil, [][2]int64{{1, 2}, {4, 5}}},
		{"event limit", evs("r", "t", 1, MaxRowEvents+1, 0), nil, [][2]int64{{1, MaxRowEvents}, {MaxRowEvents + 1, MaxRowEvents + 1}}},
		{"byte limit", evs("r", "t", 1, 3, testRowBytes/3), nil, [][2]int64{{1, 2}, {3, 3}}},
		{"a large event alone", evs("r", "t", 1, 2, testRowBytes), nil, [][2]int64{{1, 1}, {2, 2}}},
		{"skipped", evs("r", "t", 1, 6, 0), func(e checkpoint.StoredEvent) bool { return e.Seq <= 2 || e.Seq == 4 }, [][2]int64{{3, 3}, {5, 6}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows := rowsOf(PackEvents(c.events, testRowBytes, c.skip))
			var got [][2]int64
			var back []checkpoint.StoredEvent
			for _, r := range rows {
				got = append(got, [2]int64{r.First, r.Seq})
				if err := r.Unpack(func(e checkpoint.StoredEvent) { back = append(back, e) }); err != nil {
					t.Fatalf("row %d..%d: %v", r.First, r.Seq, err)
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			var want []checkpoint.StoredEvent
			for _, e := range c.events {
				if c.skip == nil || !c.skip(e) {
					want = append(want, e)
				}
			}
			if diff := cmp.Diff(want, back); diff != "" {
				t.Errorf("events read back (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPackEventsBound: a row of several events keeps its run id, thread
// id, kind and framed data within maxBytes (a store keeps such a row on
// its page), however long the ids; an event that alone passes it has a
// row of its own.
func TestPackEventsBound(t *testing.T) {
	const maxBytes = 950
	for _, c := range []struct {
		name         string
		run, thread  string
		pad          int
		wantRowsOver int // rows longer than maxBytes: single events only
	}{
		{"short ids", "r", "t", 150, 0},
		{"a run id like the runtime's", "18ee4bd0772487b400000001", "t1", 180, 0},
		{"long thread ids", "18ee4bd0772487b400000001", strings.Repeat("x", 400), 100, 0},
		{"events larger than a row", "r", "t", 1200, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows := rowsOf(PackEvents(evs(c.run, c.thread, 1, 5, c.pad), maxBytes, nil))
			over := 0
			for _, r := range rows {
				size := len(r.Run) + len(r.Thread) + len(r.Kind) + len(r.Data)
				if size > maxBytes {
					if r.First != r.Seq {
						t.Errorf("row %d..%d of %d bytes holds several events past %d", r.First, r.Seq, size, maxBytes)
					}
					over++
				}
			}
			if over != c.wantRowsOver {
				t.Errorf("%d rows past %d bytes, want %d", over, maxBytes, c.wantRowsOver)
			}
			if c.wantRowsOver == 0 && len(rows) == 5 {
				t.Errorf("no two events share a row")
			}
		})
	}
}

// runtimeEvent is an event of run in thread as the runtime encodes it
// (runtime.Event through encoding/json: type, run id, thread id and Seq
// first), with rest as its remaining fields.
func runtimeEvent(run, thread, kind string, seq int64, rest string) checkpoint.StoredEvent {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	data := fmt.Sprintf(`{"type":%s,"run_id":%s,"thread_id":%s,"seq":%d,%s}`, q(kind), q(run), q(thread), seq, rest)
	return checkpoint.StoredEvent{RunID: run, Seq: seq, ThreadID: thread, Time: time.Unix(1_800_000_000, seq).UTC(), Kind: kind, Data: []byte(data)}
}

// TestFramesLeaveOutTheHead: a framed row stores a runtime event's data
// without the head the row and frame hold already, and gives it back
// byte for byte, whatever its ids need escaped; data with another head is
// stored whole; rows of the first layout still read; a chain superstep's
// five events share one row of SQLite's 950 bytes.
func TestFramesLeaveOutTheHead(t *testing.T) {
	const rest = `"ns":[],"time":"2026-12-05T07:44:20.095537535Z","node":"n5","task_id":"18ee4bd07751bcc700000007:n5","update":{"n":6},"duration_ns":590`
	step := func(run, thread string) []checkpoint.StoredEvent {
		var out []checkpoint.StoredEvent
		for i, k := range []string{"node_end", "state", "checkpoint", "step_start", "node_start"} {
			out = append(out, runtimeEvent(run, thread, k, int64(30+i), rest))
		}
		return out
	}
	for _, c := range []struct {
		name   string
		events []checkpoint.StoredEvent
		whole  int // events stored with their head
	}{
		{"a superstep", step("18ee4bd0772487b400000001", "t1"), 0},
		{"ids to escape", step(`run<&>"\`, "thread \u2028 \u00e9 \x01"), 0},
		{"another head", []checkpoint.StoredEvent{
			runtimeEvent("r", "t", "custom", 1, `"a":1`),
			{RunID: "r", Seq: 2, ThreadID: "t", Kind: "custom", Time: time.Unix(2, 0).UTC(), Data: runtimeEvent("r", "other", "custom", 2, `"a":2`).Data},
			{RunID: "r", Seq: 3, ThreadID: "t", Kind: "custom", Time: time.Unix(3, 0).UTC(), Data: []byte(`{"type":"custom","run_id":"r","thread_id":"t","seq":3}`)},
		}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows := rowsOf(PackEvents(c.events, 950, nil))
			var back []checkpoint.StoredEvent
			for _, r := range rows {
				if err := r.Unpack(func(e checkpoint.StoredEvent) { back = append(back, e) }); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(c.events, back); diff != "" {
				t.Fatalf("events read back (-want +got):\n%s", diff)
			}
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1", len(rows))
			}
			whole, size := 0, 0
			for _, e := range c.events {
				if _, cut := headless(e, nil); cut == 0 {
					whole++
				}
				size += len(e.Data)
			}
			if whole != c.whole {
				t.Errorf("%d events stored whole, want %d", whole, c.whole)
			}
			if c.whole == 0 && len(rows[0].Data) > size*3/4 {
				t.Errorf("the row's data is %d bytes of the events' %d", len(rows[0].Data), size)
			}
		})
	}

	// A row of the first layout: each event's data whole.
	evs := step("r", "t")[:2]
	v1 := []byte{framesV1}
	for _, e := range evs {
		v1 = binary.AppendUvarint(v1, uint64(len(e.Kind)))
		v1 = append(v1, e.Kind...)
		v1 = binary.AppendVarint(v1, e.Time.UnixNano())
		v1 = binary.AppendUvarint(v1, uint64(len(e.Data)))
		v1 = append(v1, e.Data...)
	}
	var back []checkpoint.StoredEvent
	r := EventRow{Run: "r", Thread: "t", Kind: evs[1].Kind, First: evs[0].Seq, Seq: evs[1].Seq, NS: evs[1].Time.UnixNano(), Data: v1}
	if err := r.Unpack(func(e checkpoint.StoredEvent) { back = append(back, e) }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(evs, back); diff != "" {
		t.Errorf("a row of the first layout read back (-want +got):\n%s", diff)
	}
}

// TestUnpackRefusesCorruptRows: a framed row that is cut, holds another
// format, or holds more or fewer events than its Seqs fails with
// ErrEventFrames, naming the run.
func TestUnpackRefusesCorruptRows(t *testing.T) {
	good := rowsOf(PackEvents(evs("r", "t", 1, 3, 0), testRowBytes, nil))[0]
	with := func(data []byte, first, seq int64) EventRow {
		r := good
		r.Data, r.First, r.Seq = data, first, seq
		return r
	}
	for _, c := range []struct {
		name string
		row  EventRow
	}{
		{"empty", with(nil, 1, 3)},
		{"another format", with(append([]byte{9}, good.Data[1:]...), 1, 3)},
		{"cut", with(good.Data[:len(good.Data)-3], 1, 3)},
		{"fewer Seqs", with(good.Data, 1, 2)},
		{"more Seqs", with(good.Data, 1, 4)},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.row.Unpack(func(checkpoint.StoredEvent) {})
			if !errors.Is(err, ErrEventFrames) || !strings.Contains(err.Error(), `run "r"`) {
				t.Errorf("unpack = %v, want ErrEventFrames naming run r", err)
			}
		})
	}
}

// TestEventReaderSkipsOverlapAndCap: overlapping rows of a retried write
// give each Seq once; events the run's cap dropped from a straddling row
// and those at or before the reader's Seq are left out; limit stops it.
func TestEventReaderSkipsOverlapAndCap(t *testing.T) {
	rows := slices.Concat(rowsOf(PackEvents(evs("r", "t", 1, 5, 0), testRowBytes, nil)), rowsOf(PackEvents(evs("r", "t", 1, 8, 0), testRowBytes, nil)))
	for _, c := range []struct {
		name          string
		after, newest int64
		limit         int
		want          []int64
	}{
		{"all", 0, 8, 0, []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"after", 4, 8, 0, []int64{5, 6, 7, 8}},
		{"limit", 0, 8, 3, []int64{1, 2, 3}},
		{"capped", 0, checkpoint.MaxStoredEvents + 6, 0, []int64{7, 8}},
	} {
		t.Run(c.name, func(t *testing.T) {
			er := EventReader{After: c.after, Newest: c.newest, Limit: c.limit}
			for _, r := range rows {
				if r.Seq <= c.after {
					continue // the query's condition
				}
				if err := er.Add(r); err != nil {
					t.Fatal(err)
				}
			}
			var got []int64
			for _, e := range er.Out {
				got = append(got, e.Seq)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("read %v, want %v", got, c.want)
			}
		})
	}
}

// FuzzEventFrames: packing any events and unpacking the rows gives them
// back; unpacking any bytes as a framed row fails or returns events,
// never panics.
func FuzzEventFrames(f *testing.F) {
	f.Add([]byte{FramesVersion, 6, 'c', 'u', 's', 't', 'o', 'm', 2, 4, 'n', 'u', 'l', 'l'}, "kind", int64(-5), []byte(`{"a":1}`))
	f.Add([]byte{}, "", int64(0), []byte(nil))
	f.Add([]byte{FramesVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "k", int64(1<<62), []byte("x"))
	f.Add([]byte{framesV1, 1, 'k', 2, 2, '{', '}'}, "node_end", int64(3), []byte(`"x":1}`))
	f.Fuzz(func(t *testing.T, raw []byte, kind string, ns int64, data []byte) {
		r := EventRow{Run: "r", Thread: "t", First: 1, Seq: 3, Data: raw}
		n := 0
		if err := r.Unpack(func(checkpoint.StoredEvent) { n++ }); err == nil && n != 3 {
			t.Fatalf("unpack of %x returned %d events and no error, want 3", raw, n)
		}
		// The third event's data begins with its head, the fourth's with
		// another event's.
		events := []checkpoint.StoredEvent{
			{RunID: "r", Seq: 7, ThreadID: "t", Time: time.Unix(0, ns).UTC(), Kind: kind, Data: data},
			{RunID: "r", Seq: 8, ThreadID: "t", Time: time.Unix(0, -ns).UTC(), Kind: kind + "!", Data: raw},
			{RunID: "r", Seq: 9, ThreadID: "t", Time: time.Unix(0, ns).UTC(), Kind: kind, Data: append(eventHead(nil, kind, "r", "t", 9), data...)},
			{RunID: "r", Seq: 10, ThreadID: "t", Time: time.Unix(0, ns).UTC(), Kind: kind, Data: append(eventHead(nil, kind, "r", "t", 9), data...)},
		}
		var back []checkpoint.StoredEvent
		for _, row := range rowsOf(PackEvents(events, testRowBytes, nil)) {
			if err := row.Unpack(func(e checkpoint.StoredEvent) { back = append(back, e) }); err != nil {
				t.Fatal(err)
			}
		}
		if len(back) != len(events) {
			t.Fatalf("read back %d events, want %d", len(back), len(events))
		}
		for i, e := range back {
			w := events[i]
			if e.Seq != w.Seq || e.Kind != w.Kind || !e.Time.Equal(w.Time) || string(e.Data) != string(EventData(w)) {
				t.Errorf("event %d = %+v, want %+v", i, e, w)
			}
		}
	})
}
