package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// group is the group commit of a Store's fenced writes (commits and
// journal writes of runs): the writes that arrive while a transaction is
// being written and flushed wait, and the first of them then writes them
// all in the next transaction, each in a savepoint of its own, with one
// flush. Each caller gets its own result: a write that fails (its fence
// among them) is rolled back to its savepoint alone, and when the
// transaction's commit fails, every write of it is written again alone.
type group struct {
	mu      sync.Mutex
	queue   []*groupWrite
	busy    bool // a leader is writing a batch
	batches int  // transactions written, for tests
}

// groupWrite is one write waiting in the group.
type groupWrite struct {
	ctx  context.Context
	l    *heldLease
	fn   func(context.Context, *sql.Tx) error
	done chan error // its result, or errLead: write the queue
}

// errLead tells a waiting write that it writes the next batch.
var errLead = errors.New("lead the next batch")

// groupTx is tx for a run's fenced write, through the group commit.
func (s *Store) groupTx(ctx context.Context, l *heldLease, fn func(context.Context, *sql.Tx) error) error {
	w := &groupWrite{ctx: ctx, l: l, fn: fn, done: make(chan error, 1)}
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
// result.
func (s *Store) writeBatch(batch []*groupWrite) {
	if len(batch) == 1 {
		batch[0].done <- s.alone(batch[0])
		return
	}
	tx, err := s.w.BeginTx(context.Background(), nil)
	if err != nil {
		for _, w := range batch {
			w.done <- s.alone(w)
		}
		return
	}
	errs := make([]error, len(batch))
	for i, w := range batch {
		errs[i] = s.savepoint(tx, w)
	}
	if err := tx.Commit(); err != nil {
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

// alone writes w in a transaction of its own.
func (s *Store) alone(w *groupWrite) error {
	return s.tx(w.ctx, w.l, func(tx *sql.Tx) error { return w.fn(w.ctx, tx) })
}

// savepoint runs w in a savepoint of tx: on failure the savepoint is
// rolled back, and the batch's other writes stay. A write whose context
// is done is not started; one that has started is not cancelled (an
// interrupted statement would roll back the whole transaction).
func (s *Store) savepoint(tx *sql.Tx, w *groupWrite) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	ctx := context.WithoutCancel(w.ctx)
	if _, err := tx.ExecContext(ctx, "SAVEPOINT ilmek_write"); err != nil {
		return err
	}
	err := func() error {
		if w.l != nil {
			if err := s.checkFence(ctx, tx, w.l); err != nil {
				return err
			}
		}
		return w.fn(ctx, tx)
	}()
	if err != nil {
		tx.ExecContext(ctx, "ROLLBACK TO ilmek_write")
	}
	tx.ExecContext(ctx, "RELEASE ilmek_write")
	return err
}
