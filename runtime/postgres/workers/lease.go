package workers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/internal/pgside"
)

// claimedStore is the Checkpointer of a claimed request's run: the queue's
// Store, whose Lease of the claimed thread returns, once, the lease the
// claim statement took (postgres.Store.AdoptLease) rather than taking it
// in a statement of its own. The adopted lease is the Store's like any
// other: renewed by its heartbeat, its writes fenced by its epoch (a lost
// lease fails them), dropped by its Release. Every other lease, and the
// claimed thread's after the first, the Store takes as usual. Embedding
// the Store keeps every interface it implements (deltas, documents,
// events, thread records). The run's first read of the claimed thread's
// latest checkpoint is answered with the claim's read (claimread.go).
//
// A lease of the claimed thread is a runLease: it keeps the run's last
// write (its last events and the lease's release) for the worker, which
// writes it with the request's outcome in one transaction
// (Worker.finish).
type claimedStore struct {
	*postgres.Store
	thread string
	epoch  *int64    // nil: the claim took no lease
	sent   time.Time // when the claim was sent
	used   atomic.Bool

	mu         sync.Mutex
	final      pgside.Final     // the run's last write, kept (nil: none)
	finalLease checkpoint.Lease // the lease it was kept under
	// read is the claim's read of the thread (claimread.go), for the first
	// run's read under the claim's lease (nil: none, or taken).
	read *claimRead
	// expect, when set, is the thread's latest checkpoint ("" for none)
	// the claim decided the run against, for a run that cannot say so
	// itself (a fork refuses runtime.WithExpectedLatest): the run's first
	// lease of the thread fails with runtime.ErrThreadMoved when, under
	// it, the thread's latest checkpoint is another (checkExpected).
	expect *string
}

// Lease returns the claim's lease of the claimed thread the first time,
// and otherwise takes the lease through the Store. A lease of the claimed
// thread is wrapped in a runLease.
func (s *claimedStore) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	var (
		l   checkpoint.Lease
		err error
	)
	if thread == s.thread {
		s.flushFinal() // an earlier run's last write, should one be kept
	}
	if thread == s.thread && s.epoch != nil && s.used.CompareAndSwap(false, true) {
		l, err = s.Store.AdoptLease(ctx, thread, *s.epoch, s.sent, opts)
	} else {
		if thread == s.thread {
			s.takeRead(thread, "") // another lease: the claim's read may be out of date
		}
		l, err = s.Store.Lease(ctx, thread, opts)
	}
	if err != nil || thread != s.thread {
		return l, err
	}
	if err := s.checkExpected(ctx); err != nil {
		l.Release()
		return nil, err
	}
	rl := &runLease{Lease: l, s: s}
	if b, ok := l.(checkpoint.BatchLease); ok {
		return &runBatchLease{runLease: rl, b: b}, nil
	}
	return rl, nil
}

// checkExpected fails with runtime.ErrThreadMoved, once a lease of the
// claimed thread is held, when the thread's latest checkpoint is not the
// one the claim decided against (expect; nothing to check when unset,
// and only for the first lease). An earlier claim's run whose worker
// still lives (its claim expired, not its lease) may have written since
// the claim read the thread: a run decided against the thread as it was
// would run the request again. The claim's read, made under the claim's
// lease, answers when the run holds that lease; otherwise the thread is
// read.
func (s *claimedStore) checkExpected(ctx context.Context) error {
	s.mu.Lock()
	want, r := s.expect, s.read
	s.expect = nil
	s.mu.Unlock()
	if want == nil {
		return nil
	}
	got := ""
	switch {
	case r != nil && r.none:
	case r != nil:
		got = r.cp.ID
	default:
		cp, err := s.Store.Get(ctx, s.thread, "")
		switch {
		case errors.Is(err, runtime.ErrNotFound):
		case err != nil:
			return err
		default:
			got = cp.ID
		}
	}
	if got != *want {
		return fmt.Errorf("thread %q: latest checkpoint %q, the request's claim found %q: %w", s.thread, got, *want, runtime.ErrThreadMoved)
	}
	return nil
}

// keep prepares cs, the run's last write under l, and keeps it for the
// worker instead of writing it now; it reports whether it did. A run's
// last write is its last events with the lease's release (a queued run
// keeps an event log), with the checkpoint that ended the run when the
// run was done, and the checkpoint kept for the next write before it
// (a batch).
func (s *claimedStore) keep(l checkpoint.Lease, cs ...checkpoint.Commit) (bool, error) {
	p, ok := l.(pgside.Preparer)
	if !ok || len(cs) == 0 || !keepable(cs[len(cs)-1]) {
		return false, nil
	}
	f, err := p.PrepareFinal(cs...)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.final, s.finalLease = f, l
	return true, nil
}

// keepable reports whether c is a run's last write that keep keeps.
func keepable(c checkpoint.Commit) bool { return c.Release && len(c.Events) > 0 }

// keeps reports whether l's last write is kept: its Release waits for
// the write (takeFinal, flushFinal).
func (s *claimedStore) keeps(l checkpoint.Lease) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.final != nil && s.finalLease == l
}

// takeFinal returns the kept last write and its lease (nil when none),
// for the caller to write and then release.
func (s *claimedStore) takeFinal() (pgside.Final, checkpoint.Lease) {
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, l := s.final, s.finalLease
	s.final, s.finalLease = nil, nil
	return f, l
}

// flushFinal writes the kept last write alone, when no outcome took it
// (the request is released, or the worker stops), and releases its
// lease.
func (s *claimedStore) flushFinal() {
	f, l := s.takeFinal()
	if f == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), finishBudget)
	defer cancel()
	f.Write(ctx, nil) // on failure the thread's next claim records how the run ended
	l.Release()
}

// dropUnused drops the claim's lease when no run took it (a request
// finished or released without running, or refused before its run asked
// for the lease), so that the thread's next request does not find it
// held.
func (s *claimedStore) dropUnused() {
	if s == nil || s.epoch == nil || !s.used.CompareAndSwap(false, true) {
		return
	}
	if l, err := s.Store.AdoptLease(context.Background(), s.thread, *s.epoch, s.sent, checkpoint.LeaseOptions{}); err == nil {
		l.Release()
	}
}

// runLease is the lease of a claimed request's run (claimedStore): the
// run's last write is kept for the worker (keep); Release waits for it.
type runLease struct {
	checkpoint.Lease
	s *claimedStore
}

func (l *runLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	if kept, err := l.s.keep(l.Lease, c); kept || err != nil {
		return err
	}
	return l.Lease.Commit(ctx, c)
}

func (l *runLease) PutJournal(ctx context.Context, taskID string, entries []checkpoint.JournalEntry) error {
	return l.Lease.PutJournal(ctx, taskID, entries)
}

// Release gives the lease back, unless its last write is kept: the
// worker releases it once it wrote that.
func (l *runLease) Release() {
	if !l.s.keeps(l.Lease) {
		l.Lease.Release()
	}
}

// runBatchLease is runLease for a lease that writes batches (as the
// Store's do): it stays a checkpoint.BatchLease.
type runBatchLease struct {
	*runLease
	b checkpoint.BatchLease
}

// CommitBatch writes cs, or keeps it for the worker when it is the run's
// last write (a checkpoint kept for the next write, then the one that
// ends the run).
func (l *runBatchLease) CommitBatch(ctx context.Context, cs []checkpoint.Commit, j *checkpoint.JournalWrite) error {
	if j == nil {
		if kept, err := l.s.keep(l.Lease, cs...); kept || err != nil {
			return err
		}
	}
	return l.b.CommitBatch(ctx, cs, j)
}
