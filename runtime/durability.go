package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Durability says when a run's superstep checkpoints reach storage
// (WithDurability).
type Durability uint8

const (
	// DurableEachSuperstep writes each superstep's checkpoint before the
	// next superstep starts: a crash loses at most the superstep in
	// flight. The default.
	DurableEachSuperstep Durability = iota + 1
	// DurableWithNextWrite keeps a superstep's checkpoint until the run's
	// next write and writes the two in one commit (one transaction, one
	// flush): the next superstep's checkpoint, a Step's or an
	// Interrupt's journal, a pause, or the run's end, whichever comes
	// first. A run of plain supersteps then flushes once per two
	// supersteps, and a Step writes its journal and the checkpoint before
	// it in one flush.
	//
	// What it gives up: while a superstep runs, the checkpoint of the one
	// before may not be stored yet, so a crash (or a lost lease) there
	// loses two supersteps, not one, and the thread's next run does both
	// again. Steps keep every guarantee: a Step's journal is written with
	// (never before) the checkpoint its task was planned at, so a
	// journaled step still never runs again. The "checkpoint" event of a
	// kept checkpoint is emitted when it is handed over, before it is
	// written, and an Observer's CheckpointCommit record of it times the
	// hand-over (the write that carries it takes the time of both); the
	// run's result, a pause, an error and a cancellation are reported only
	// after everything is written.
	//
	// It is the way to make Steps cheap: with it a superstep whose task
	// runs a Step commits once (the journal and the checkpoint before
	// it), as a plain superstep does by default, where the default
	// commits twice (the journal, then the checkpoint).
	//
	// It needs a store that writes batches (checkpoint.BatchLease: the
	// SQLite and PostgreSQL stores do); with another, runs are durable
	// at every superstep as with DurableEachSuperstep.
	DurableWithNextWrite
)

// String names d as the documentation does.
func (d Durability) String() string {
	switch d {
	case DurableEachSuperstep:
		return "each superstep"
	case DurableWithNextWrite:
		return "with the next write"
	}
	return "default (each superstep)"
}

// WithDurability sets when a run's checkpoints are written (default
// DurableEachSuperstep), given to a graph for every run of it, or to one
// run, whose own wins. A value that is none of the constants is refused
// with an *OptionError when the graph is built or the run starts.
func WithDurability(d Durability) SharedOption {
	return sharedOption{
		graph: func(c *graphConfig) { c.durability = d },
		run:   func(c *runConfig) { c.durability = d },
	}
}

// checkDurability refuses a Durability that is none of the constants (0
// is not given: the default).
func checkDurability(d Durability) error {
	if d > DurableWithNextWrite {
		return &OptionError{Msg: fmt.Sprintf("runtime: WithDurability(%d): want runtime.DurableEachSuperstep or runtime.DurableWithNextWrite", d)}
	}
	return nil
}

// holdingLease is the lease of a run with DurableWithNextWrite on a store
// that writes batches: it keeps one commit of a checkpoint (the last
// superstep's) instead of writing it, and writes it together with the
// run's next write. Only the runner's goroutine commits; a task's
// goroutine writes journals, so the kept commit is guarded.
//
// A kept checkpoint is the runner's r.latest: the runner builds the next
// one in its other room (checkpointRoom), so the kept one stays intact
// until it is written. What the runner reuses sooner (the delta and its
// writes, the events) is copied.
type holdingLease struct {
	checkpoint.BatchLease

	mu   sync.Mutex
	kept bool
	// once keeps at most the run's first commit (queuehook.KeepFirst
	// without DurableWithNextWrite); spent says it came.
	once, spent bool
	batch       [2]checkpoint.Commit // [0]: the kept commit; [1]: the one it is written with
	delta       checkpoint.Delta     // the kept commit's delta, its writes in writes and buf
	writes      []checkpoint.ChannelWrite
	buf         []byte
	events      []checkpoint.StoredEvent

	// written is the id of the newest checkpoint known to be stored ("":
	// none of this run's, or the thread has none); lost says a kept
	// checkpoint was not written, so the run's result names written.
	written string
	lost    bool
	logger  *slog.Logger
	// unwritten are the events of a kept commit that was not written: the
	// run's last write stores them, so that the run's stored events have
	// no gap.
	unwritten []checkpoint.StoredEvent
	// dropped is lost, read without mu by a Step about to start its
	// effect (planLost): the next run plans the tasks of a checkpoint
	// that was not written again, and their steps with them. It stays
	// set: every later checkpoint of the run descends from the one lost
	// and cannot be stored as its delta.
	dropped atomic.Bool
}

// holdable reports whether c may wait for the run's next write: a
// superstep's checkpoint and nothing that must be stored with the
// run's outcome (the thread record, a pause, the lease given back).
func holdable(c checkpoint.Commit) bool {
	return c.Checkpoint != nil && !c.Release && c.Thread == nil && len(c.Checkpoint.Pending) == 0
}

// Commit keeps c when it may wait and nothing is kept, and otherwise
// writes c with the kept commit, if any, in one batch.
func (h *holdingLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	first := !h.spent
	h.spent = h.once
	if !h.kept && first && holdable(c) {
		h.keep(c)
		return nil
	}
	if !h.kept {
		err := h.BatchLease.Commit(ctx, c)
		if err == nil && c.Checkpoint != nil {
			h.written = c.Checkpoint.ID
		}
		return err
	}
	h.batch[1] = c
	return h.writeKept(ctx, h.batch[:2], nil)
}

// PutJournal writes the kept commit, if any, with the journal, in one
// batch: the journal of a task planned at the kept checkpoint is never
// stored without it. Journal writes that find nothing kept go to the
// store at once, side by side.
func (h *holdingLease) PutJournal(ctx context.Context, taskID string, entries []checkpoint.JournalEntry) error {
	h.mu.Lock()
	if !h.kept {
		h.mu.Unlock()
		return h.BatchLease.PutJournal(ctx, taskID, entries)
	}
	defer h.mu.Unlock()
	return h.writeKept(ctx, h.batch[:1], &checkpoint.JournalWrite{TaskID: taskID, Entries: entries})
}

// latest returns the id of the thread's latest checkpoint when a kept
// checkpoint was lost ("" and false otherwise): the run's result names it.
func (h *holdingLease) latest() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.written, h.lost
}

// takeUnwritten returns the events of kept commits that were not written,
// and forgets them.
func (h *holdingLease) takeUnwritten() []checkpoint.StoredEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	ev := h.unwritten
	h.unwritten = nil
	return ev
}

// flush writes the kept commit, if any, alone.
func (h *holdingLease) flush(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.kept {
		return nil
	}
	return h.writeKept(ctx, h.batch[:1], nil)
}

// Release writes what is still kept (the runner flushes before it ends;
// this is the guard for a path that did not) and gives the lease back.
func (h *holdingLease) Release() {
	ctx, cancel := durableWrite(context.Background())
	if err := h.flush(ctx); err != nil && h.logger != nil {
		h.logger.Error("writing a kept checkpoint before giving the lease back failed", slog.Any("err", err))
	}
	cancel()
	h.BatchLease.Release()
}

// keep takes c as the kept commit, copying what the runner reuses.
func (h *holdingLease) keep(c checkpoint.Commit) {
	if h.written == "" && !h.lost {
		h.written = c.Checkpoint.ParentID // stored: nothing else is kept
	}
	if d := c.Delta; d != nil {
		h.buf = h.buf[:0]
		for _, w := range d.Writes {
			h.buf = append(h.buf, w.Value...)
		}
		h.writes = h.writes[:0]
		off := 0
		for _, w := range d.Writes {
			if n := len(w.Value); w.Value != nil {
				w.Value = h.buf[off : off+n : off+n]
				off += n
			}
			h.writes = append(h.writes, w)
		}
		h.delta = checkpoint.Delta{Base: d.Base, Writes: h.writes}
		c.Delta = &h.delta
	}
	if len(c.Events) > 0 {
		h.events = append(h.events[:0], c.Events...)
		c.Events = h.events
	}
	h.batch[0], h.kept = c, true
}

// writeKept writes cs (the kept commit first) and j in one batch, and
// forgets the kept commit whatever the outcome: written, or lost with
// the run's error.
func (h *holdingLease) writeKept(ctx context.Context, cs []checkpoint.Commit, j *checkpoint.JournalWrite) error {
	err := h.CommitBatch(ctx, cs, j)
	h.kept = false
	if err != nil {
		h.lost = true
		h.dropped.Store(true)
		h.unwritten = append(h.unwritten, h.batch[0].Events...)
	} else if !h.lost {
		for _, c := range cs {
			if c.Checkpoint != nil {
				h.written = c.Checkpoint.ID
			}
		}
	}
	clear(h.batch[:])
	clear(h.events)
	return err
}

// holdWrites wraps the run's lease when the run keeps checkpoints for its
// next write (DurableWithNextWrite; only its first with
// queuehook.KeepFirst) and its store writes batches.
func (r *runner[S, U]) holdWrites(lease checkpoint.Lease) checkpoint.Lease {
	every := r.cfg.durability == DurableWithNextWrite
	if !every && !r.cfg.keepFirst || r.seed != nil {
		return lease
	}
	b, ok := lease.(checkpoint.BatchLease)
	if !ok {
		return lease
	}
	r.hold = &holdingLease{BatchLease: b, logger: r.cfg.logger, once: !every}
	return r.hold
}

// flushKept writes the commit the run kept, before the run ends with
// status and err, and returns them as they stand after it: a kept
// checkpoint that could not be written fails the run.
func (r *runner[S, U]) flushKept(status Status, err error) (Status, error) {
	if r.hold == nil {
		return status, err
	}
	ctx, cancel := durableWrite(r.ctx)
	defer cancel()
	ferr := r.hold.flush(ctx)
	if ferr == nil {
		return status, err
	}
	ce := &CheckpointError{Op: "put", Err: ferr}
	if status == StatusError && err != nil {
		return status, errors.Join(err, ce)
	}
	return StatusError, ce
}

// keepUnwrittenEvents puts back, before the events the run buffers, the
// events of a kept commit that was not written: the run's last write
// (finalCommit) stores them with the rest.
func (r *runner[S, U]) keepUnwrittenEvents() {
	if r.hold == nil || r.evs == nil {
		return
	}
	if ev := r.hold.takeUnwritten(); len(ev) > 0 {
		r.evbuf = append(ev, r.evbuf...)
	}
}
