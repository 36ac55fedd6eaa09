package runtime

import (
	"bytes"
	"context"
	"fmt"

	"github.com/ilmek-go/ilmek/internal/testhook"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// How a run hands its checkpoints to the Checkpointer: as deltas of the
// checkpoint before when the backend stores deltas, encoding only what the
// superstep's updates wrote when the program can (WriteEncoder), and the
// whole state otherwise.

// deltaState is the runner's part of writing checkpoints as deltas.
type deltaState struct {
	split   checkpoint.Differ         // finds the delta between two full encodings
	writes  []checkpoint.ChannelWrite // the pending checkpoint's change, when encoded
	encoded bool                      // writes hold the pending checkpoint's change from r.latest
	werr    error                     // the program's failure to encode them, reported at the checkpoint
	delta   checkpoint.Delta          // the delta write hands over, reused: a Commit does not keep it
	cps     [2]checkpointAlloc        // room for the checkpoints write hands over, reused likewise
	ids     idRoom                    // room for the checkpoints' ids, kept across runs
	// deltas says the run's Checkpointer stores deltas (a
	// checkpoint.DeltaCheckpointer), asked once per run (setupDeltas):
	// an interface assertion each superstep cost more than a tenth of a
	// memory checkpoint.
	deltas bool
}

// checkpointRoom returns room for the run's next checkpoint. A Commit does
// not keep what it is handed (checkpoint.Lease), so a run alternates
// between two checkpoints of its own, never overwriting the latest one
// (r.latest), which the next checkpoint is written against.
func (r *runner[S, U]) checkpointRoom() *checkpointAlloc {
	a := &r.cps[0]
	if r.latest == &a.cp {
		a = &r.cps[1]
	}
	// checkpoint overwrites all of a that it uses; a plan of no task leaves
	// a.next's old task, unused, until the next one.
	return a
}

// setupDeltas records, as a run starts, whether its Checkpointer stores
// deltas and, when it does, the program's WriteEncoder (nil for none).
func (r *runner[S, U]) setupDeltas() {
	_, r.deltas = r.cfg.cp.(checkpoint.DeltaCheckpointer)
	r.we = nil
	if r.deltas {
		r.we, _ = r.p.(writeEncoder[S, U])
	}
}

// encodeWrites records what updates changed from prev to next, when the
// run's next checkpoint can be a delta of r.latest and the program encodes
// updates. It is called right after Reduce, while the updates are at hand;
// the checkpoint of next then needs no encoding of the whole state.
func (r *runner[S, U]) encodeWrites(prev, next *S, updates []U) {
	r.encoded, r.werr = false, nil
	if r.latest == nil || r.cfg.cp == nil {
		return
	}
	if r.we == nil {
		return
	}
	ws, ok, err := r.we.EncodeWrites(r.writes[:0], prev, next, updates)
	r.writes = ws
	if err != nil {
		r.werr = &CheckpointError{Op: "encode state", Err: err}
		return
	}
	r.encoded = ok
	if ok && testhook.VerifyWrites() {
		r.verifyWrites(prev, next, ws)
	}
}

// verifyWrites panics when writes do not turn prev's encoding into next's
// byte for byte: a broken WriteEncoder, caught by the tests that turn the
// check on (internal/testhook).
func (r *runner[S, U]) verifyWrites(prev, next *S, ws []checkpoint.ChannelWrite) {
	before, err := r.p.EncodeState(*prev)
	if err != nil {
		panic(fmt.Sprintf("verify writes: encode the state before: %v", err))
	}
	after, err := r.p.EncodeState(*next)
	if err != nil {
		panic(fmt.Sprintf("verify writes: encode the state after: %v", err))
	}
	got, err := checkpoint.ApplyDeltas(bytes.Clone(before), ws)
	if err != nil {
		panic(fmt.Sprintf("verify writes: %v\nbefore: %s\nwrites: %+v", err, before, ws))
	}
	if !bytes.Equal(got, after) {
		panic(fmt.Sprintf("verify writes: the writes do not give the state after\nbefore: %s\nwrites: %s\ngot:    %s\nwant:   %s", before, writesText(ws), got, after))
	}
}

func writesText(ws []checkpoint.ChannelWrite) string {
	var b bytes.Buffer
	for _, w := range ws {
		fmt.Fprintf(&b, "[%s append=%v merge=%v %s]", w.Channel, w.Append, w.Merge, w.Value)
	}
	return b.String()
}

// writeContext returns the context of a checkpoint write to an in-process
// Checkpointer (the run's own: it carries the lease and nothing else is
// read from it), or nil for another Checkpointer (each write then gets
// durableWrite's).
func (r *runner[S, U]) writeContext() context.Context {
	// Memory's writes never wait on I/O and never look at their context's
	// cancellation: a run writes to it under its own context, without
	// durableWrite's detachment and time limit.
	if _, ok := r.cfg.cp.(*checkpoint.Memory); !ok {
		return nil
	}
	return r.ctx
}

// write hands cp to the Checkpointer: as a delta of the run's latest
// checkpoint (its parent) when the backend stores deltas and the change
// fits one, in full otherwise. It returns the encoded bytes handed over
// when the run is timed (0 otherwise: only put's timing reads them).
// cp.Channels is nil when the program encoded the change (r.encoded); a
// write in full then encodes the state.
func (r *runner[S, U]) write(ctx context.Context, cp *Checkpoint, done []string) (int, error) {
	encoded := r.encoded
	r.encoded = false
	c := checkpoint.Commit{Checkpoint: cp, Done: done, Thread: r.tw, Release: r.last}
	r.last = false
	if r.deltas && r.latest != nil && cp.ParentID == r.latest.ID {
		var writes []checkpoint.ChannelWrite
		fits := true
		switch {
		case cp.Channels == nil && encoded:
			writes = r.writes
		case cp.Channels == nil || sameBytes(cp.Channels, r.latest.Channels):
			// A pause, or a run that starts without input: nothing changed.
		case r.latest.Channels == nil:
			fits = false
		default:
			writes, fits = r.split.Writes(r.latest.Channels, cp.Channels)
		}
		if fits {
			r.delta = checkpoint.Delta{Base: r.latest.ID, Writes: writes}
			n := 0
			if r.timed { // (a run that folds its end keeps an event log: it is timed)
				n = r.delta.Size() + checkpointBytes(cp)
			}
			// cp without its channels (they are the delta's to say); cp
			// keeps them for the next delta.
			chans := cp.Channels
			cp.Channels = nil
			c.Delta, c.Events = &r.delta, r.endEvents(cp, n)
			err := r.info.lease.Commit(ctx, c)
			cp.Channels = chans
			r.delta = checkpoint.Delta{}
			return n, err
		}
	}
	if cp.Channels == nil {
		chans, err := r.p.EncodeState(r.state)
		if err != nil {
			return 0, fmt.Errorf("encode state: %w", err)
		}
		cp.Channels = chans
	}
	n := 0
	if r.timed {
		n = checkpointBytes(cp)
	}
	c.Events = r.endEvents(cp, n)
	return n, r.info.lease.Commit(ctx, c)
}

// sameBytes reports whether a and b are the same slice (a checkpoint that
// carries its parent's channels unchanged).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
