package runtime

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// threadRun is the runner's part of recording its thread: metadata and
// outcome (ThreadRecorder) and the event log (EventStore). All of it is
// nil for a run whose checkpointer has neither, or that asked for neither.
type threadRun struct {
	trec     checkpoint.ThreadRecorder
	tw       *checkpoint.ThreadWrite // what the next checkpoint write records with it
	recorded Status                  // the outcome a checkpoint write recorded
	evs      checkpoint.EventStore   // WithEventLog
	evbuf    []checkpoint.StoredEvent
	last     bool // the next commit is the run's last write (checkpoint.Commit.Release)
	// folding says the checkpoint being written ends a run that keeps an
	// event log: the write stores the run's last events with it (endEvents)
	// and is the run's last write. tail holds those events until the
	// write returns; folded says it did, so they are handed to the
	// consumer then and nothing is written after.
	folding, folded bool
	tail            []Event
}

// foldsEnd reports whether the checkpoint that ends the run (done) is to
// carry its last events (state, checkpoint, run_end), its outcome and the
// lease's release: a run that keeps an event log, whose run_end would
// otherwise need a write of its own after that checkpoint's. A subgraph's
// child run writes through its parent's lease and never folds.
func (r *runner[S, U]) foldsEnd() bool {
	return r.evs != nil && r.seed == nil
}

// endEvents returns the events the checkpoint write in progress stores:
// those emitted since the last write and, when the write ends the run
// (folding), the run's last ones, which the consumer gets once it
// returned. n is the size of the checkpoint as written (the checkpoint
// event's Bytes); the write cannot time itself, so that event has no
// Duration.
func (r *runner[S, U]) endEvents(cp *Checkpoint, n int) []checkpoint.StoredEvent {
	if r.folding {
		r.stepEvents(Event{Type: EventCheckpoint, CheckpointID: cp.ID, Bytes: n})
		r.emit(Event{Type: EventRunEnd, Status: StatusDone, Duration: time.Since(r.t0)})
	}
	return r.evbuf
}

// lastCommit reports whether a commit that ends the run is its last write
// as it stands: no event log (foldsEnd: its run_end event is written with
// it) and not a subgraph's child run (whose lease is its parent's).
// finalCommit then writes nothing.
func (r *runner[S, U]) lastCommit() bool {
	return r.evs == nil && r.seed == nil
}

// checkThreadOptions refuses WithThreadMeta and WithEventLog without a
// checkpointer that can hold what they ask for.
func checkThreadOptions(c *runConfig) error {
	if c.threadMeta != nil {
		if err := checkThreadMeta(c.threadMeta); err != nil {
			return err
		}
		if _, ok := c.cp.(checkpoint.ThreadRecorder); !ok {
			return &OptionError{Msg: fmt.Sprintf("runtime: WithThreadMeta needs Thread and a checkpointer that keeps thread records (a checkpoint.ThreadRecorder), which %T is not", c.cp)}
		}
	}
	if c.events {
		if _, ok := c.cp.(checkpoint.EventStore); !ok {
			return &OptionError{Msg: fmt.Sprintf("runtime: WithEventLog needs Thread and a checkpointer that keeps an event log (a checkpoint.EventStore), which %T is not", c.cp)}
		}
	}
	return nil
}

// setupThread readies the run's thread records from its options.
func (r *runner[S, U]) setupThread() {
	if r.cfg.cp == nil {
		return
	}
	if tr, ok := r.cfg.cp.(checkpoint.ThreadRecorder); ok {
		r.trec = tr
		if r.cfg.threadMeta != nil {
			r.tw = &checkpoint.ThreadWrite{Meta: r.cfg.threadMeta}
		}
	}
	if r.cfg.events {
		r.evs, _ = r.cfg.cp.(checkpoint.EventStore)
	}
}

// outcomeWith makes the next checkpoint write, the run's last, record the
// run's outcome.
func (r *runner[S, U]) outcomeWith(status Status, err error, pending []PendingInterrupt) {
	if r.tw == nil {
		r.tw = &checkpoint.ThreadWrite{}
	}
	r.tw.Outcome = &checkpoint.ThreadOutcome{Status: status, RunID: r.info.runID, Ended: time.Now().UTC(), Error: shortError(err)}
	r.tw.Pending = pending
}

// threadWritten is called after a checkpoint write that carried r.tw.
func (r *runner[S, U]) threadWritten(err error) {
	if err != nil {
		r.tw.Outcome, r.tw.Pending = nil, nil // recorded at the end instead
		return
	}
	if r.tw.Outcome != nil {
		r.recorded = r.tw.Outcome.Status
	}
	r.tw = nil
}

// refusedAnswer is the error of an answer a paused superstep took back.
func (r *runner[S, U]) refusedAnswer() error {
	for i := range r.cur {
		if rf := r.slots[i].info.refused; rf != nil {
			return rf
		}
	}
	return nil
}

// finalCommit is the run's last write: its outcome, and metadata no
// checkpoint write carried, unless its last checkpoint write recorded
// them already, with the events emitted since that checkpoint (run_end
// among them), in one commit under the run's lease.
func (r *runner[S, U]) finalCommit(status Status, err error, pending []PendingInterrupt) {
	var c checkpoint.Commit
	if r.trec != nil && (r.tw != nil || r.recorded != status) {
		w := &checkpoint.ThreadWrite{Outcome: &checkpoint.ThreadOutcome{Status: status, RunID: r.info.runID, Ended: time.Now().UTC(), Error: shortError(err)}, Pending: pending}
		if r.tw != nil {
			w.Meta = r.tw.Meta
		}
		c.Thread = w
	}
	c.Events = r.evbuf
	if c.Thread == nil && len(c.Events) == 0 {
		return
	}
	c.Release = r.seed == nil // the run's last write
	ctx, cancel := durableWrite(r.ctx)
	defer cancel()
	if werr := r.info.lease.Commit(ctx, c); werr != nil {
		attrs := []slog.Attr{}
		if len(c.Events) > 0 {
			attrs = append(attrs, slog.Int64("from_seq", c.Events[0].Seq), slog.Int64("to_seq", c.Events[len(c.Events)-1].Seq))
		}
		r.logError("recording the thread's outcome and the run's last events failed", werr, attrs...)
		return
	}
	if c.Thread != nil {
		r.tw, r.recorded = nil, status
	}
	r.eventsCommitted()
}

// eventsCommitted forgets the buffered events a commit stored.
func (r *runner[S, U]) eventsCommitted() {
	clear(r.evbuf)
	r.evbuf = r.evbuf[:0]
}

// logError writes an Error record about the run to its logger, if any.
func (r *runner[S, U]) logError(msg string, err error, attrs ...slog.Attr) {
	l := r.cfg.logger
	if l == nil {
		l = r.g.logger
	}
	if l == nil {
		return
	}
	attrs = append(attrs, slog.String(attrRun, r.info.runID), slog.String(attrThread, r.cfg.thread), slog.String(attrError, err.Error()))
	l.LogAttrs(r.ctx, slog.LevelError, msg, attrs...)
}
