package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// ErrLeaseLost is checkpoint.ErrLeaseLost, matched by the error of a
// write of a thread whose lease this Store held but another run has taken
// over (after it expired without renewal) or deleted with the thread, and
// by the error checkpoint.LeaseOptions.Lost receives when the heartbeat
// finds the lease gone. Nothing was written; the run that held the lease
// must stop, the new holder owns the thread. The error is a
// *checkpoint.LeaseLostError saying why.
var ErrLeaseLost = checkpoint.ErrLeaseLost

// heldLease is a lease this Store holds: the shared lease state and
// heartbeat (store.Lease), and its epoch in the lease row. It implements
// checkpoint.Lease; its Fence is the epoch in decimal.
type heldLease struct {
	store.Lease
	s     *Store
	epoch int64
}

// Renew extends the lease row if it still carries the epoch.
func (l *heldLease) Renew(ctx context.Context) (bool, error) {
	var held bool
	err := l.s.retry.Do(ctx, "renew lease", l.Thread, nil, func(ctx context.Context) error {
		tag, err := l.s.pool.Exec(ctx, l.s.q.renewLease, l.Thread, l.epoch, l.s.opts.ttl.Microseconds())
		held = err == nil && tag.RowsAffected() > 0
		return err
	})
	return held, err
}

// Drop deletes the lease row if it still carries the epoch.
func (l *heldLease) Drop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l.s.pool.Exec(ctx, l.s.q.dropLease, l.Thread, l.epoch)
}

// Lost is the error of the lease found lost for reason, by found.
func (l *heldLease) Lost(reason checkpoint.LeaseLostReason, found string) error {
	return &checkpoint.LeaseLostError{Thread: l.Thread, Store: l.s.where(), Fence: l.Fence(), Reason: reason, Found: found}
}

// Lease takes the thread's lease for one run, across goroutines, processes
// and machines, under a new epoch. It fails at once, with an error matching
// runtime.ErrThreadBusy, while another live holder has it. A heartbeat
// renews it every TTL/3 and reports each renewal to opts.Renewed; when a
// renewal finds another epoch or no row, opts.Lost receives an error
// matching ErrLeaseLost. The lease is the run's write handle: its Commit
// and PutJournal are fenced by its epoch.
func (s *Store) Lease(ctx context.Context, threadID string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l := &heldLease{s: s}
	var busy error
	held, err := s.leases.Take(ctx, &l.Lease, threadID, opts, s.opts.ttl,
		func(ctx context.Context, _ time.Time) (string, store.Row, bool, error) {
			err := s.pool.QueryRow(ctx, s.q.takeLease, threadID, s.opts.owner, s.opts.ttl.Microseconds()).Scan(&l.epoch)
			if errors.Is(err, pgx.ErrNoRows) {
				var who string
				var epoch int64
				var expires time.Time
				err := s.pool.QueryRow(ctx, s.q.leaseHolder, threadID).Scan(&who, &epoch, &expires)
				busy = s.leases.Busy(threadID, s.where(), fmt.Sprintf("%s, epoch %d", who, epoch), expires, err == nil)
				return "", nil, false, nil
			}
			return strconv.FormatInt(l.epoch, 10), l, err == nil, err
		})
	switch {
	case err != nil:
		return nil, fmt.Errorf("postgres: lease thread %q in %s: %w", threadID, s.where(), err)
	case !held:
		return nil, busy
	}
	return l, nil
}

// lost is the error of a fenced write under l that found another epoch.
func (l *heldLease) lost() error { return l.Lost(checkpoint.LeaseTakenOver, "fenced write") }

// LeaseOwner returns how the Store names itself in the lease rows it
// writes (Owner), for a statement of the caller's that takes a lease row
// for AdoptLease.
func (s *Store) LeaseOwner() string { return s.opts.owner }

// LeaseTTLOf returns how long the Store's leases last without renewal
// (LeaseTTL), for a statement of the caller's that takes a lease row for
// AdoptLease.
func (s *Store) LeaseTTLOf() time.Duration { return s.opts.ttl }

// AdoptLease returns, as the thread's lease, a lease row that a statement
// of the caller's (sent at sent) took under epoch: a row of the Store's
// ilmek_leases for threadID with that epoch (from the sequence
// ilmek_lease_epoch), the owner LeaseOwner and expiry LeaseTTLOf after
// the statement's clock_timestamp(), inserted or taken over from an
// expired holder exactly as Lease's statement does. From then on it is a
// lease of this Store like one Lease took: a heartbeat renews it, its
// writes are fenced by epoch and fail with ErrLeaseLost once another run
// took the thread, Release drops it. Its local deadline counts from sent,
// so the time between the caller's statement and AdoptLease counts
// against the TTL. A queue's worker takes a claimed request's lease in
// its claim statement this way, saving the lease's round trip. When
// AdoptLease fails (ctx done, the Store closed), it drops the row.
func (s *Store) AdoptLease(ctx context.Context, threadID string, epoch int64, sent time.Time, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l := &heldLease{s: s, epoch: epoch}
	held, err := s.leases.Take(ctx, &l.Lease, threadID, opts, s.opts.ttl,
		func(context.Context, time.Time) (string, store.Row, bool, error) {
			return strconv.FormatInt(epoch, 10), l, true, nil
		})
	if err != nil || !held {
		l.Thread = threadID
		l.Drop()
		if err == nil {
			err = store.ErrClosed
		}
		return nil, fmt.Errorf("postgres: adopt the lease of thread %q (epoch %d) in %s: %w", threadID, epoch, s.where(), err)
	}
	l.Backdate(sent)
	return l, nil
}
