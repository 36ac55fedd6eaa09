package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// CheckpointColumns are a checkpoint's columns other than its ids, step,
// fingerprint and format, as both stores keep them.
type CheckpointColumns struct {
	// Created is the creation time in Unix nanoseconds, 0 when unset.
	Created int64
	// Channels, Next and Pending are the encoded channels, next tasks and
	// pending interrupts.
	Channels, Next, Pending []byte
}

// EncodeCheckpoint encodes cp's columns.
func EncodeCheckpoint(cp *checkpoint.Checkpoint) (CheckpointColumns, error) {
	var c CheckpointColumns
	var err error
	if c.Next, err = json.Marshal(cp.Next); err != nil {
		return c, fmt.Errorf("encode next tasks: %w", err)
	}
	if c.Pending, err = json.Marshal(cp.Pending); err != nil {
		return c, fmt.Errorf("encode pending interrupts: %w", err)
	}
	if !cp.Created.IsZero() {
		c.Created = cp.Created.UnixNano()
	}
	if cp.Channels != nil {
		c.Channels = []byte(cp.Channels)
	}
	return c, nil
}

// Decode sets cp's creation time, channels, next tasks and pending
// interrupts from c. A chain row, read for its channels only, has neither
// next tasks nor pending interrupts.
func (c CheckpointColumns) Decode(cp *checkpoint.Checkpoint) error {
	if c.Created != 0 {
		cp.Created = time.Unix(0, c.Created).UTC()
	}
	if c.Channels != nil {
		cp.Channels = json.RawMessage(c.Channels)
	}
	if c.Next == nil && c.Pending == nil {
		return nil
	}
	if err := json.Unmarshal(c.Next, &cp.Next); err != nil {
		return fmt.Errorf("checkpoint %s: decode next tasks: %w", cp.ID, err)
	}
	if err := json.Unmarshal(c.Pending, &cp.Pending); err != nil {
		return fmt.Errorf("checkpoint %s: decode pending interrupts: %w", cp.ID, err)
	}
	return nil
}

// Outcome is a thread record's outcome as both stores write it.
type Outcome struct {
	Status, RunID, Error string
	// Ended is when the run ended in Unix nanoseconds (0: not ended), Now
	// the record's update time: when the run ended, else now.
	Ended, Now int64
	// Pending is the encoded pending interrupts, nil when there are none.
	Pending []byte
}

// Record writes w: its outcome with outcome when it has one, then its
// metadata with meta when it has some, at the record's update time now.
func Record(w *checkpoint.ThreadWrite, outcome func(o *Outcome) error, meta func(now int64) error) error {
	o := Outcome{Now: time.Now().UnixNano()}
	if w.Outcome != nil {
		o.Status, o.RunID, o.Error = string(w.Outcome.Status), w.Outcome.RunID, w.Outcome.Error
		if !w.Outcome.Ended.IsZero() {
			o.Ended = w.Outcome.Ended.UnixNano()
			o.Now = o.Ended
		}
		if len(w.Pending) > 0 {
			var err error
			if o.Pending, err = json.Marshal(w.Pending); err != nil {
				return fmt.Errorf("encode pending interrupts: %w", err)
			}
		}
		if err := outcome(&o); err != nil {
			return fmt.Errorf("write outcome: %w", err)
		}
	}
	if len(w.Meta) == 0 {
		return nil
	}
	return meta(o.Now)
}

// ThreadRow is a thread record's columns other than its id, metadata, run
// id and error, as both stores keep them.
type ThreadRow struct {
	Status         string
	Ended, Updated int64
	Pending        []byte
}

// Decode sets info's status, end, update time and pending interrupts.
func (r ThreadRow) Decode(info *checkpoint.ThreadInfo) error {
	info.Outcome.Status = checkpoint.Status(r.Status)
	if r.Ended != 0 {
		info.Outcome.Ended = time.Unix(0, r.Ended).UTC()
	}
	info.Updated = time.Unix(0, r.Updated).UTC()
	if len(r.Pending) > 0 && info.Outcome.Status == checkpoint.StatusInterrupted {
		if err := json.Unmarshal(r.Pending, &info.Pending); err != nil {
			return fmt.Errorf("thread %q: decode pending interrupts: %w", info.ID, err)
		}
	}
	return nil
}

// Page is the page of at most limit threads of rows, read with one more
// than limit: when there is more, Next is the cursor after the last.
func Page(rows []checkpoint.ThreadInfo, limit int) checkpoint.ThreadPage {
	page := checkpoint.ThreadPage{Threads: rows}
	if len(rows) > limit {
		page.Threads = rows[:limit]
		last := rows[limit-1]
		page.Next = checkpoint.EncodeThreadCursor(checkpoint.ThreadCursor{Updated: last.Updated.UnixNano(), ID: last.ID})
	}
	return page
}

// TrimEvents calls trim for every run of events whose last sequence
// number passes checkpoint.MaxStoredEvents, with the last number to drop.
func TrimEvents(events []checkpoint.StoredEvent, trim func(run string, through int64) error) error {
	last := map[string]int64{}
	for _, e := range events {
		last[e.RunID] = max(last[e.RunID], e.Seq)
	}
	for run, seq := range last {
		if seq <= checkpoint.MaxStoredEvents {
			continue
		}
		if err := trim(run, seq-checkpoint.MaxStoredEvents); err != nil {
			return fmt.Errorf("drop old events of run %q: %w", run, err)
		}
	}
	return nil
}

// DecodeJournal decodes a task's stored journal raw, read with error err
// (returned as it is when not nil).
func DecodeJournal(raw []byte, err error) ([]checkpoint.JournalEntry, error) {
	if err != nil {
		return nil, err
	}
	var entries []checkpoint.JournalEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("the journal is corrupt: %w", err)
	}
	return entries, nil
}

// Commit writes c in the commit's transaction: the checkpoint with put,
// the thread record with record (when c has one), then the events with
// events.
func Commit(c checkpoint.Commit, put func() error, record func(*checkpoint.ThreadWrite) error, events func([]checkpoint.StoredEvent) error) error {
	if err := put(); err != nil {
		return err
	}
	if c.Thread != nil {
		if err := record(c.Thread); err != nil {
			return fmt.Errorf("record the thread: %w", err)
		}
	}
	return events(c.Events)
}
