package sqlite

import (
	"context"
	"database/sql"
	"errors"
	goruntime "runtime"
	"sync"
)

// group is the group commit of a Store's fenced writes (commits and
// journal writes of runs): the writes that arrive while a transaction is
// being written and flushed wait, and the first of them then writes them
// all in the next transaction, with one flush. Each caller gets its own
// result: when a write fails (its fence among them) or the transaction's
// commit does, nothing of the transaction is written, and every write of
// it is written again alone.
type group struct {
	mu      sync.Mutex
	queue   []*groupWrite
	busy    bool // a leader is writing a batch
	batches int  // transactions written, for tests
}

// groupWrite is one write waiting in the group.
type groupWrite struct {
	ctx    context.Context
	l      *heldLease
	fenced bool // fn checks l's fence itself (prepareCommit)
	fn     func(context.Context, *sql.Tx) error
	done   chan error // its result, or errLead: write the queue
}

// errLead tells a waiting write that it writes the next batch.
var errLead = errors.New("lead the next batch")

// groupTx is tx for a run's write through the group commit, fenced by l
// (when not nil) with a statement before fn, or by fn itself when fenced.
func (s *Store) groupTx(ctx context.Context, l *heldLease, fenced bool, fn func(context.Context, *sql.Tx) error) error {
	w := &groupWrite{ctx: ctx, l: l, fenced: fenced, fn: fn, done: make(chan error, 1)}
	g := &s.group
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if !lead {
		if err := <-w.done; err != errLead {
			return err
		}
	}
	// Let the goroutines that are ready to run have their turn first:
	// the runs that the last batch released are computing their next
	// superstep, and a write of theirs that arrives now joins this batch
	// rather than waiting for the next flush. Without it, with sixteen
	// threads, over a quarter of the batches held one write (each its own
	// flush), the first to come back after a batch of all of them. With
	// nothing else ready to run it returns at once.
	goruntime.Gosched()
	g.mu.Lock()
	batch := g.queue
	g.queue = nil
	g.batches++
	g.mu.Unlock()
	s.writeBatch(batch)
	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].done <- errLead
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return <-w.done
}

// writeBatch writes batch in one transaction and tells each write its
// result. The transaction has no savepoints: when a write fails (its
// fence, a stored id), or the commit does, the transaction is rolled back
// whole and each write is written again alone, with a result of its own.
// Failures are rare, and two statements a write (SAVEPOINT and RELEASE)
// were a third of the writer's work with many threads.
func (s *Store) writeBatch(batch []*groupWrite) {
	if len(batch) == 1 {
		batch[0].done <- s.alone(batch[0])
		return
	}
	errs := make([]error, len(batch))
	tx, err := s.w.BeginTx(context.Background(), nil)
	if err == nil {
		for i, w := range batch {
			if errs[i] = w.ctx.Err(); errs[i] != nil {
				continue // not started
			}
			if err = s.inBatch(tx, w); err != nil {
				break
			}
		}
		if err == nil {
			err = tx.Commit()
		} else {
			tx.Rollback()
		}
	}
	if err != nil {
		// Nothing of the batch is written: each write is tried alone.
		for i, w := range batch {
			if errs[i] == nil {
				errs[i] = s.alone(w)
			}
		}
	}
	for i, w := range batch {
		w.done <- errs[i]
	}
}

// alone writes w in a transaction of its own. Like a write in a batch,
// it is not cancelled once started: its statements run without w.ctx's
// cancellation, so the driver starts no goroutine per statement to watch
// for it (9% of a single thread's CPU profile at synchronous NORMAL), and
// a wait for another process's write lock is bounded by the busy timeout.
func (s *Store) alone(w *groupWrite) error {
	if err := w.ctx.Err(); err != nil {
		return err // not started
	}
	ctx := context.WithoutCancel(w.ctx)
	l := w.l
	if w.fenced {
		l = nil // fn checks it
	}
	return s.tx(ctx, l, func(tx *sql.Tx) error { return w.fn(ctx, tx) })
}

// inBatch runs w, fenced, in tx, the transaction of a batch. A write that
// has started is not cancelled (an interrupted statement would roll back
// the whole transaction).
func (s *Store) inBatch(tx *sql.Tx, w *groupWrite) error {
	ctx := context.WithoutCancel(w.ctx)
	if w.l != nil && !w.fenced {
		if err := s.checkFence(ctx, tx, w.l); err != nil {
			return err
		}
	}
	return w.fn(ctx, tx)
}
