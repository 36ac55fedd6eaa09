package workers

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
)

// claimedStore is the Checkpointer of a claimed request's run: the queue's
// Store, whose Lease of the claimed thread returns, once, the lease the
// claim statement took (postgres.Store.AdoptLease) rather than taking it
// in a statement of its own. The adopted lease is the Store's like any
// other: renewed by its heartbeat, its writes fenced by its epoch (a lost
// lease fails them), dropped by its Release. Every other lease, and the
// claimed thread's after the first, the Store takes as usual. Embedding
// the Store keeps every interface it implements (deltas, documents,
// events, thread records).
type claimedStore struct {
	*postgres.Store
	thread string
	epoch  *int64    // nil: the claim took no lease
	sent   time.Time // when the claim was sent
	used   atomic.Bool
	// before is called before each write under a lease of the claimed
	// thread: it waits for the run's id to be recorded (runStarted).
	before func()
}

// Lease returns the claim's lease of the claimed thread the first time,
// and otherwise takes the lease through the Store. A lease of the claimed
// thread writes only after before returned (runLease).
func (s *claimedStore) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	var (
		l   checkpoint.Lease
		err error
	)
	if thread == s.thread && s.epoch != nil && s.used.CompareAndSwap(false, true) {
		l, err = s.Store.AdoptLease(ctx, thread, *s.epoch, s.sent, opts)
	} else {
		l, err = s.Store.Lease(ctx, thread, opts)
	}
	if err != nil || thread != s.thread || s.before == nil {
		return l, err
	}
	if b, ok := l.(checkpoint.BatchLease); ok {
		return &runBatchLease{BatchLease: b, before: s.before}, nil
	}
	return &runLease{Lease: l, before: s.before}, nil
}

// runLease is the lease of a claimed request's run: each write first
// calls before (claimedStore), which returns at once after the first.
type runLease struct {
	checkpoint.Lease
	before func()
}

func (l *runLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	l.before()
	return l.Lease.Commit(ctx, c)
}

func (l *runLease) PutJournal(ctx context.Context, taskID string, entries []checkpoint.JournalEntry) error {
	l.before()
	return l.Lease.PutJournal(ctx, taskID, entries)
}

// runBatchLease is runLease for a lease that writes batches (as the
// Store's do): it stays a checkpoint.BatchLease.
type runBatchLease struct {
	checkpoint.BatchLease
	before func()
}

func (l *runBatchLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	l.before()
	return l.BatchLease.Commit(ctx, c)
}

func (l *runBatchLease) PutJournal(ctx context.Context, taskID string, entries []checkpoint.JournalEntry) error {
	l.before()
	return l.BatchLease.PutJournal(ctx, taskID, entries)
}

func (l *runBatchLease) CommitBatch(ctx context.Context, cs []checkpoint.Commit, j *checkpoint.JournalWrite) error {
	l.before()
	return l.BatchLease.CommitBatch(ctx, cs, j)
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
