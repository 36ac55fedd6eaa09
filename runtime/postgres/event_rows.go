package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// This file holds how events are laid out in ilmek_events (migration 11).
// A write stores the events of one run that follow each other (Seq n, n+1,
// …) as one row: a statement inserts, and the server indexes and logs, a
// row per write rather than a row per event. The row's key, seq, is its
// last event's Seq and first_seq its first's; a row of one event is stored
// as it always was (data is the event's own), and one of more events holds
// them framed in data (eventFrames). Rows written before migration 11 have
// no first_seq: one event each.
//
// A reader asks for the rows whose last Seq is past the one it saw, so a
// row that straddles it comes back whole and its earlier events are
// skipped. The cap of a run's stored events (checkpoint.MaxStoredEvents)
// deletes whole rows; a reader skips the events of a straddling row that
// the cap dropped. A retried write whose first try committed unseen may
// store a row overlapping an earlier one: the reader returns each Seq once.

// Row limits: a write's events go in rows of at most maxRowEvents events
// and about maxRowBytes of data, so that no row grows past what the
// server keeps inline and a reader after a late Seq decodes little.
const (
	maxRowEvents = 64
	maxRowBytes  = 16 << 10
)

// framesVersion is the first byte of a row's framed data: the frame layout
// below. A reader refuses another.
const framesVersion = 1

// eventRows are the rows of a write's events, as the arrays of the events
// CTE (unnest): columns run_id, seq (the row's last Seq), first_seq,
// thread_id, time_ns (the last event's), kind (the last event's) and data.
type eventRows struct {
	runs, threads, kinds []string
	seqs, firsts, times  []int64
	datas                [][]byte
}

// args returns the rows as statement arguments, in column order.
func (r *eventRows) args() []any {
	return []any{r.runs, r.seqs, r.firsts, r.threads, r.times, r.kinds, r.datas}
}

// eventData is e's data as a row holds it: JSON null for none.
func eventData(e checkpoint.StoredEvent) []byte {
	if e.Data == nil {
		return []byte("null")
	}
	return e.Data
}

// packEvents returns the rows of events, in their order, leaving out those
// skip reports (the events a trim in the same statement drops: a
// statement's delete does not see its own inserts). Events of one run and
// thread whose Seqs follow each other share a row, up to the row limits.
func packEvents(events []checkpoint.StoredEvent, skip func(checkpoint.StoredEvent) bool) eventRows {
	var r eventRows
	for i := 0; i < len(events); {
		if skip != nil && skip(events[i]) {
			i++
			continue
		}
		first := events[i]
		j, size := i+1, len(eventData(first))
		for j < len(events) && j-i < maxRowEvents && size < maxRowBytes {
			e := events[j]
			if e.RunID != first.RunID || e.ThreadID != first.ThreadID || e.Seq != events[j-1].Seq+1 || (skip != nil && skip(e)) {
				break
			}
			size += len(eventData(e))
			j++
		}
		last := events[j-1]
		data := eventData(first)
		if j-i > 1 {
			data = appendFrames(make([]byte, 0, size+16*(j-i)+1), events[i:j])
		}
		r.runs, r.threads, r.kinds = append(r.runs, first.RunID), append(r.threads, first.ThreadID), append(r.kinds, last.Kind)
		r.seqs, r.firsts, r.times = append(r.seqs, last.Seq), append(r.firsts, first.Seq), append(r.times, last.Time.UnixNano())
		r.datas = append(r.datas, data)
		i = j
	}
	return r
}

// appendFrames appends the framed form of events (consecutive Seqs of one
// run) to b: the version byte, then per event its kind (length, bytes),
// its time (Unix nanoseconds, zig-zag varint) and its data (length,
// bytes).
func appendFrames(b []byte, events []checkpoint.StoredEvent) []byte {
	b = append(b, framesVersion)
	for _, e := range events {
		b = binary.AppendUvarint(b, uint64(len(e.Kind)))
		b = append(b, e.Kind...)
		b = binary.AppendVarint(b, e.Time.UnixNano())
		d := eventData(e)
		b = binary.AppendUvarint(b, uint64(len(d)))
		b = append(b, d...)
	}
	return b
}

// errFrames says a row's framed data is not what appendFrames writes.
var errFrames = errors.New("the row's framed events are corrupt")

// eventRow is a row of ilmek_events as read.
type eventRow struct {
	run, thread, kind string
	seq, first, ns    int64 // first == seq: one event
	data              []byte
}

// unpack calls emit for each event of row r, in Seq order. A row of one
// event is the event itself; a framed row must hold exactly its Seqs
// first..seq.
func (r eventRow) unpack(emit func(checkpoint.StoredEvent)) error {
	if r.first >= r.seq {
		emit(checkpoint.StoredEvent{RunID: r.run, Seq: r.seq, ThreadID: r.thread, Time: time.Unix(0, r.ns).UTC(), Kind: r.kind, Data: r.data})
		return nil
	}
	b := r.data
	if len(b) == 0 || b[0] != framesVersion {
		return fmt.Errorf("run %q, events %d to %d: %w (format %v, this build reads %d)", r.run, r.first, r.seq, errFrames, firstByte(b), framesVersion)
	}
	b = b[1:]
	seq := r.first
	for len(b) > 0 {
		kind, rest, ok := lengthPrefixed(b)
		if !ok {
			return fmt.Errorf("run %q, event %d: %w (its kind)", r.run, seq, errFrames)
		}
		ns, n := binary.Varint(rest)
		if n <= 0 {
			return fmt.Errorf("run %q, event %d: %w (its time)", r.run, seq, errFrames)
		}
		data, rest, ok := lengthPrefixed(rest[n:])
		if !ok {
			return fmt.Errorf("run %q, event %d: %w (its data)", r.run, seq, errFrames)
		}
		if seq > r.seq {
			return fmt.Errorf("run %q: %w (more events than Seqs %d to %d)", r.run, errFrames, r.first, r.seq)
		}
		emit(checkpoint.StoredEvent{RunID: r.run, Seq: seq, ThreadID: r.thread, Time: time.Unix(0, ns).UTC(), Kind: string(kind), Data: data})
		seq++
		b = rest
	}
	if seq != r.seq+1 {
		return fmt.Errorf("run %q: %w (events %d to %d of Seqs %d to %d)", r.run, errFrames, r.first, seq-1, r.first, r.seq)
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

// firstByte is b's first byte, or "none".
func firstByte(b []byte) any {
	if len(b) == 0 {
		return "none"
	}
	return b[0]
}

// eventReader collects the events of a run's rows, read in order of their
// key: each Seq once (rows of a retried write may overlap), none at or
// before after or dropped by the run's cap (newest is the run's newest
// stored Seq), at most limit (all when limit <= 0). cursor is the key of
// the last row read: the next page starts after it.
type eventReader struct {
	after, newest, cursor int64
	limit                 int
	out                   []checkpoint.StoredEvent
}

// add adds row r's events; it reports whether the reader wants more.
func (er *eventReader) add(r eventRow) (bool, error) {
	er.cursor = r.seq
	floor := max(er.after, er.newest-checkpoint.MaxStoredEvents)
	err := r.unpack(func(e checkpoint.StoredEvent) {
		if e.Seq <= floor || (er.limit > 0 && len(er.out) >= er.limit) {
			return
		}
		er.out = append(er.out, e)
		er.after = e.Seq
		floor = e.Seq
	})
	return er.limit <= 0 || len(er.out) < er.limit, err
}

// trimmedEvents returns the events of a write that its own trim leaves
// standing, as rows: a run past checkpoint.MaxStoredEvents drops the
// events through its last Seq less the cap (store.TrimEvents), and the
// runs and bounds of those drops.
func trimmedEvents(events []checkpoint.StoredEvent) (eventRows, []string, []int64) {
	var trimRuns []string
	var trimThrough []int64
	store.TrimEvents(events, func(run string, through int64) error {
		trimRuns, trimThrough = append(trimRuns, run), append(trimThrough, through)
		return nil
	})
	if len(trimRuns) == 0 {
		return packEvents(events, nil), nil, nil
	}
	rows := packEvents(events, func(e checkpoint.StoredEvent) bool {
		for i, r := range trimRuns {
			if e.RunID == r && e.Seq <= trimThrough[i] {
				return true
			}
		}
		return false
	})
	return rows, trimRuns, trimThrough
}
