package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// This file holds how both stores lay events out in ilmek_events (SQLite
// migration 8, PostgreSQL migration 11). A write stores the events of one
// run that follow each other (Seq n, n+1, …) as one row: a statement
// inserts, and the database indexes and logs, a row per write rather than
// a row per event. The row's key, seq, is its last event's Seq and
// first_seq its first's; a row of one event is stored as it always was
// (data is the event's own), and one of more events holds them framed in
// data (AppendFrames). Rows written before those migrations have no
// first_seq: one event each. Since SQLite migration 10 and PostgreSQL
// migration 13, a frame leaves out the head of a runtime event's JSON
// (its type, run id, thread id and Seq), which the row and the frame hold
// already; rows framed before read as they were.
//
// A reader asks for the rows whose last Seq is past the one it saw, so a
// row that straddles it comes back whole and its earlier events are
// skipped. The cap of a run's stored events (checkpoint.MaxStoredEvents)
// deletes whole rows; a reader skips the events of a straddling row that
// the cap dropped. A retried write whose first try committed unseen may
// store a row overlapping an earlier one: the reader returns each Seq
// once. Rows must not nest (a row holding a stored row's later events
// without its earlier ones), or rows in key order would not hold their
// events in Seq order; the stores see to it.

// MaxRowEvents is the most events a row holds, so that a reader after a
// late Seq of a long write decodes little. A store also bounds a row's
// bytes (PackEvents' maxBytes): what its rows keep inline.
const MaxRowEvents = 64

// FramesVersion is the first byte of a row's framed data as written: the
// frame layout of AppendFrames. A reader also reads framesV1, and refuses
// any other.
const FramesVersion = 2

// framesV1 is the first frame layout (SQLite migration 8, PostgreSQL 11):
// an event's data stored whole.
const framesV1 = 1

// EventRows are the rows of a write's events, column by column: run_id,
// seq (the row's last Seq), first_seq, thread_id, time_ns (the last
// event's), kind (the last event's) and data.
type EventRows struct {
	Runs, Threads, Kinds []string
	Seqs, Firsts, Times  []int64
	Datas                [][]byte
}

// Len is the number of rows.
func (r *EventRows) Len() int { return len(r.Runs) }

// Row returns row i.
func (r *EventRows) Row(i int) EventRow {
	return EventRow{Run: r.Runs[i], Thread: r.Threads[i], Kind: r.Kinds[i], Seq: r.Seqs[i], First: r.Firsts[i], NS: r.Times[i], Data: r.Datas[i]}
}

// EventData is e's data as a row holds it: JSON null for none.
func EventData(e checkpoint.StoredEvent) []byte {
	if e.Data == nil {
		return []byte("null")
	}
	return e.Data
}

// PackEvents returns the rows of events, in their order, leaving out those
// skip reports (the events a trim in the same statement drops: a
// statement's delete does not see its own inserts). Events of one run and
// thread whose Seqs follow each other share a row, up to MaxRowEvents of
// them, while the row's variable-length columns (its run id, thread id,
// kind and framed data) fit in maxBytes; an event larger than that has a
// row of its own.
func PackEvents(events []checkpoint.StoredEvent, maxBytes int, skip func(checkpoint.StoredEvent) bool) EventRows {
	var r EventRows
	for i := 0; i < len(events); {
		if skip != nil && skip(events[i]) {
			i++
			continue
		}
		first := events[i]
		ids := len(first.RunID) + len(first.ThreadID)
		j := i + 1
		framed := 1 + frameBytes(first) // the format byte and the first frame
		for j < len(events) && j-i < MaxRowEvents {
			e := events[j]
			if e.RunID != first.RunID || e.ThreadID != first.ThreadID || e.Seq != events[j-1].Seq+1 || (skip != nil && skip(e)) ||
				ids+len(e.Kind)+framed+frameBytes(e) > maxBytes {
				break
			}
			framed += frameBytes(e)
			j++
		}
		last := events[j-1]
		data := EventData(first)
		if j-i > 1 {
			data = AppendFrames(make([]byte, 0, framed), events[i:j])
		}
		r.Runs, r.Threads, r.Kinds = append(r.Runs, first.RunID), append(r.Threads, first.ThreadID), append(r.Kinds, last.Kind)
		r.Seqs, r.Firsts, r.Times = append(r.Seqs, last.Seq), append(r.Firsts, first.Seq), append(r.Times, last.Time.UnixNano())
		r.Datas = append(r.Datas, data)
		i = j
	}
	return r
}

// AppendFrames appends the framed form of events (consecutive Seqs of one
// run) to b: the version byte, then per event its kind (length, bytes),
// its time (Unix nanoseconds, zig-zag varint) and its data: a uvarint of
// its stored length times two, plus one when the stored bytes leave out
// the event's head (eventHead), then the stored bytes. A runtime event's
// JSON begins with its type, run id, thread id and Seq, which the row
// and the frame hold already: about 80 of an event's 200 bytes.
func AppendFrames(b []byte, events []checkpoint.StoredEvent) []byte {
	b = append(b, FramesVersion)
	var head [headRoom]byte
	for _, e := range events {
		b = binary.AppendUvarint(b, uint64(len(e.Kind)))
		b = append(b, e.Kind...)
		b = binary.AppendVarint(b, e.Time.UnixNano())
		d, cut := headless(e, head[:0])
		b = binary.AppendUvarint(b, uint64(len(d))<<1|cut)
		b = append(b, d...)
	}
	return b
}

// frameBytes is the size of e's frame in AppendFrames' layout.
func frameBytes(e checkpoint.StoredEvent) int {
	var buf [binary.MaxVarintLen64]byte
	var head [headRoom]byte
	d, cut := headless(e, head[:0])
	return binary.PutUvarint(buf[:], uint64(len(e.Kind))) + len(e.Kind) + binary.PutVarint(buf[:], e.Time.UnixNano()) +
		binary.PutUvarint(buf[:], uint64(len(d))<<1|cut) + len(d)
}

// headRoom is room enough for the head of an event with short ids.
const headRoom = 128

// headless returns the bytes of e's data a frame stores: without its
// head when the data begins with exactly the head eventHead makes of
// e's kind, run, thread and Seq (cut is 1), whole otherwise (cut 0).
// scratch is room for the head.
func headless(e checkpoint.StoredEvent, scratch []byte) (d []byte, cut uint64) {
	d = EventData(e)
	h := eventHead(scratch, e.Kind, e.RunID, e.ThreadID, e.Seq)
	if len(d) > len(h) && string(d[:len(h)]) == string(h) {
		return d[len(h):], 1
	}
	return d, 0
}

// eventHead appends to b the beginning of the JSON encoding/json makes
// of a runtime event of this kind, run, thread and Seq (the fields it
// begins with, in their order) and the comma after them.
func eventHead(b []byte, kind, run, thread string, seq int64) []byte {
	b = append(b, `{"type":`...)
	b = appendJSONString(b, kind)
	b = append(b, `,"run_id":`...)
	b = appendJSONString(b, run)
	b = append(b, `,"thread_id":`...)
	b = appendJSONString(b, thread)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	return append(b, ',')
}

// appendJSONString appends s as encoding/json encodes a string: quoted,
// with its escapes (the HTML ones among them) when it needs any.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// ErrEventFrames says a row's framed data is not what AppendFrames writes.
var ErrEventFrames = errors.New("the row's framed events are corrupt")

// EventRow is a row of ilmek_events as read.
type EventRow struct {
	Run, Thread, Kind string
	Seq, First, NS    int64 // First == Seq: one event
	Data              []byte
}

// Unpack calls emit for each event of row r, in Seq order. A row of one
// event is the event itself; a framed row must hold exactly its Seqs
// First..Seq.
func (r EventRow) Unpack(emit func(checkpoint.StoredEvent)) error {
	if r.First >= r.Seq {
		emit(checkpoint.StoredEvent{RunID: r.Run, Seq: r.Seq, ThreadID: r.Thread, Time: time.Unix(0, r.NS).UTC(), Kind: r.Kind, Data: r.Data})
		return nil
	}
	b := r.Data
	if len(b) == 0 || (b[0] != FramesVersion && b[0] != framesV1) {
		return fmt.Errorf("run %q, events %d to %d: %w (format %v, this build reads %d and %d)", r.Run, r.First, r.Seq, ErrEventFrames, firstByte(b), framesV1, FramesVersion)
	}
	v1 := b[0] == framesV1
	b = b[1:]
	seq := r.First
	for len(b) > 0 {
		kind, rest, ok := lengthPrefixed(b)
		if !ok {
			return fmt.Errorf("run %q, event %d: %w (its kind)", r.Run, seq, ErrEventFrames)
		}
		ns, n := binary.Varint(rest)
		if n <= 0 {
			return fmt.Errorf("run %q, event %d: %w (its time)", r.Run, seq, ErrEventFrames)
		}
		var data []byte
		if v1 {
			data, rest, ok = lengthPrefixed(rest[n:])
		} else {
			data, rest, ok = cutPrefixed(rest[n:], string(kind), r.Run, r.Thread, seq)
		}
		if !ok {
			return fmt.Errorf("run %q, event %d: %w (its data)", r.Run, seq, ErrEventFrames)
		}
		if seq > r.Seq {
			return fmt.Errorf("run %q: %w (more events than Seqs %d to %d)", r.Run, ErrEventFrames, r.First, r.Seq)
		}
		emit(checkpoint.StoredEvent{RunID: r.Run, Seq: seq, ThreadID: r.Thread, Time: time.Unix(0, ns).UTC(), Kind: string(kind), Data: data})
		seq++
		b = rest
	}
	if seq != r.Seq+1 {
		return fmt.Errorf("run %q: %w (events %d to %d of Seqs %d to %d)", r.Run, ErrEventFrames, r.First, seq-1, r.First, r.Seq)
	}
	return nil
}

// lengthPrefixed splits b into the bytes its uvarint length prefix counts
// and the rest.
func lengthPrefixed(b []byte) (field, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// cutPrefixed splits b into an event's data as AppendFrames stored it
// (its length times two, plus one when its head is left out) and the
// rest, putting back the head of the event of this kind, run, thread and
// Seq when it was left out.
func cutPrefixed(b []byte, kind, run, thread string, seq int64) (data, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n>>1 > uint64(len(b)-k) {
		return nil, nil, false
	}
	stored, rest := b[k:k+int(n>>1)], b[k+int(n>>1):]
	if n&1 == 0 {
		return stored, rest, true
	}
	data = eventHead(make([]byte, 0, headRoom+len(stored)), kind, run, thread, seq)
	return append(data, stored...), rest, true
}

// firstByte is b's first byte, or "none".
func firstByte(b []byte) any {
	if len(b) == 0 {
		return "none"
	}
	return b[0]
}

// EventReader collects the events of a run's rows, read in order of their
// key: each Seq once (rows of a retried write may overlap), none at or
// before After or dropped by the run's cap (Newest is the run's newest
// stored Seq), at most Limit (all when Limit <= 0). Cursor is the key of
// the last row read: the next page starts after it.
type EventReader struct {
	After, Newest, Cursor int64
	Limit                 int
	Out                   []checkpoint.StoredEvent
}

// Add adds row r's events, up to the reader's Limit.
func (er *EventReader) Add(r EventRow) error {
	er.Cursor = r.Seq
	floor := max(er.After, er.Newest-checkpoint.MaxStoredEvents)
	err := r.Unpack(func(e checkpoint.StoredEvent) {
		if e.Seq <= floor || (er.Limit > 0 && len(er.Out) >= er.Limit) {
			return
		}
		er.Out = append(er.Out, e)
		er.After = e.Seq
		floor = e.Seq
	})
	return err
}

// TrimmedEvents returns the events of a write that its own trim leaves
// standing, as rows (PackEvents), and the runs and bounds of those drops:
// a run past checkpoint.MaxStoredEvents drops the events through its last
// Seq less the cap (TrimEvents).
func TrimmedEvents(events []checkpoint.StoredEvent, maxBytes int) (EventRows, []string, []int64) {
	var trimRuns []string
	var trimThrough []int64
	TrimEvents(events, func(run string, through int64) error {
		trimRuns, trimThrough = append(trimRuns, run), append(trimThrough, through)
		return nil
	})
	if len(trimRuns) == 0 {
		return PackEvents(events, maxBytes, nil), nil, nil
	}
	rows := PackEvents(events, maxBytes, func(e checkpoint.StoredEvent) bool {
		for i, r := range trimRuns {
			if e.RunID == r && e.Seq <= trimThrough[i] {
				return true
			}
		}
		return false
	})
	return rows, trimRuns, trimThrough
}

// ReadEventPages reads a run's events after after, at most limit (all
// when limit <= 0), through page: it adds to er the events of the run's
// next page of rows after er.Cursor (at most limit rows when limit > 0)
// and returns how many rows the page had. A page of rows can hold fewer
// events than it counts (a retried write's row overlapping an earlier
// one), so pages are read while the reader wants more and the last page
// was full.
func ReadEventPages(after int64, limit int, page func(er *EventReader) (rows int, err error)) ([]checkpoint.StoredEvent, error) {
	er := EventReader{After: after, Cursor: after, Limit: limit}
	for {
		rows, err := page(&er)
		if err != nil {
			return nil, err
		}
		if limit <= 0 || rows < limit || len(er.Out) >= limit {
			return er.Out, nil
		}
	}
}

// EventRowScanner is what ScanEventRows reads: *sql.Rows and pgx.Rows.
type EventRowScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanEventRows adds to er the events of the run's rows, each scanned as
// its key, first Seq (coalesced to the key), thread, time, kind, data and
// the run's newest Seq, and returns how many rows it read.
func ScanEventRows(rows EventRowScanner, runID string, er *EventReader) (int, error) {
	n := 0
	for rows.Next() {
		r := EventRow{Run: runID}
		if err := rows.Scan(&r.Seq, &r.First, &r.Thread, &r.NS, &r.Kind, &r.Data, &er.Newest); err != nil {
			return n, err
		}
		n++
		if err := er.Add(r); err != nil {
			return n, err
		}
	}
	return n, rows.Err()
}
