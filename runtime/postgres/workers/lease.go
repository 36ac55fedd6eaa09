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
}

// Lease returns the claim's lease of the claimed thread the first time,
// and otherwise takes the lease through the Store.
func (s *claimedStore) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	if thread == s.thread && s.epoch != nil && s.used.CompareAndSwap(false, true) {
		return s.Store.AdoptLease(ctx, thread, *s.epoch, s.sent, opts)
	}
	return s.Store.Lease(ctx, thread, opts)
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
