package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// ErrLeaseLost is checkpoint.ErrLeaseLost, matched by the error of a
// write of a thread whose lease this Store held but another run has taken
// over (after it expired without renewal) or deleted with the thread, and
// by the error checkpoint.LeaseOptions.Lost receives when the heartbeat
// finds the lease gone. Nothing was written; the run that held the lease
// must stop, the new holder owns the thread. The error is a
// *checkpoint.LeaseLostError saying why.
var ErrLeaseLost = checkpoint.ErrLeaseLost

// heldLease is a lease this Store holds: its epoch, its deadline and its
// heartbeat. It implements checkpoint.Lease.
type heldLease struct {
	s      *Store
	thread string
	epoch  int64
	opts   checkpoint.LeaseOptions
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	rel    sync.Once

	mu       sync.Mutex
	deadline time.Time // monotonic: when the last renewal was sent + TTL - margin
	deleted  bool      // this Store deleted the thread; writes are refused
}

// Fence returns the lease's epoch in decimal.
func (l *heldLease) Fence() string { return strconv.FormatInt(l.epoch, 10) }

// Deadline is when the last successful renewal (or the take) was sent,
// plus the TTL minus a tenth of it.
func (l *heldLease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// Release gives the lease back; later calls do nothing.
func (l *heldLease) Release() { l.rel.Do(func() { l.s.release(l) }) }

// leaseMarginDiv sets the safety margin of a lease's local deadline: a
// tenth of the TTL before the row expires on the server, for the time a
// renewal takes to get there and for the drift of the clocks.
const leaseMarginDiv = 10

// renewedAt moves the deadline to sent + TTL - margin, where sent is when
// the take or renewal that succeeded was sent.
func (l *heldLease) renewedAt(sent time.Time) time.Time {
	d := sent.Add(l.s.opts.ttl - l.s.opts.ttl/leaseMarginDiv)
	l.mu.Lock()
	l.deadline = d
	l.mu.Unlock()
	return d
}

func (l *heldLease) stopHeartbeatAsync() { l.once.Do(func() { close(l.stop) }) }

func (l *heldLease) stopHeartbeat() {
	l.stopHeartbeatAsync()
	<-l.done
}

// refused is the error of a write under l when this Store deleted l's
// thread; nil otherwise.
func (l *heldLease) refused() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.deleted {
		return l.s.lostEpoch(l.thread, l.epoch, checkpoint.LeaseThreadDeleted, "fenced write")
	}
	return nil
}

// Lease takes the thread's lease for one run, across goroutines, processes
// and machines, under a new epoch. It fails at once, with an error matching
// runtime.ErrThreadBusy, while another live holder has it. A heartbeat
// renews it every TTL/3 and reports each renewal to opts.Renewed; when a
// renewal finds another epoch or no row, opts.Lost receives an error
// matching ErrLeaseLost. The lease is the run's write handle: its Commit
// and PutJournal are fenced by its epoch.
func (s *Store) Lease(ctx context.Context, threadID string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("postgres: lease thread %q: the store on %s is closed", threadID, s.where())
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("postgres: lease thread %q in %s: %w", threadID, s.where(), err)
	}
	// Once sent, the take is not abandoned half-way: a statement cancelled
	// after it wrote the row would leave the thread busy until the TTL.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ttl)
	defer cancel()
	sent := time.Now()
	var epoch int64
	err := s.pool.QueryRow(tctx, s.q.takeLease, threadID, s.opts.owner, s.opts.ttl.Microseconds()).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, s.busy(tctx, threadID)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: lease thread %q in %s: %w", threadID, s.where(), err)
	}
	l := &heldLease{s: s, thread: threadID, epoch: epoch, opts: opts, stop: make(chan struct{}), done: make(chan struct{})}
	l.renewedAt(sent)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		close(l.done)
		s.deleteLease(l)
		return nil, fmt.Errorf("postgres: lease thread %q: the store on %s was closed", threadID, s.where())
	}
	s.held[threadID] = l
	s.mu.Unlock()
	go s.heartbeat(l)
	return l, nil
}

// busy builds the ErrThreadBusy error naming the lease's holder.
func (s *Store) busy(ctx context.Context, threadID string) error {
	var (
		who     string
		epoch   int64
		expires time.Time
	)
	if err := s.pool.QueryRow(ctx, s.q.leaseHolder, threadID).Scan(&who, &epoch, &expires); err != nil {
		return fmt.Errorf("%w (thread %q in %s)", runtime.ErrThreadBusy, threadID, s.where())
	}
	return fmt.Errorf("%w (thread %q in %s is held by %s, epoch %d; the lease expires %s unless its holder renews it, which a live holder does every %v)",
		runtime.ErrThreadBusy, threadID, s.where(), who, epoch, expires.UTC().Format(time.RFC3339Nano), s.opts.ttl/3)
}

// heartbeat renews the lease every TTL/3 until it is stopped or lost. A
// renewal that finds another epoch or no row reports the loss. One that
// does not reach the server is retried at the next tick; meanwhile the
// lease's local deadline stays where it was, and once it has passed the
// runtime starts no effect (checkpoint.LeaseDeadlinePassed).
func (s *Store) heartbeat(l *heldLease) {
	defer close(l.done)
	t := time.NewTicker(s.opts.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.ttl/3)
		sent := time.Now()
		tag, err := s.pool.Exec(ctx, s.q.renewLease, l.thread, l.epoch, s.opts.ttl.Microseconds())
		cancel()
		if err != nil {
			continue // the server did not answer: try again at the next tick
		}
		if tag.RowsAffected() == 0 {
			// Lost: fenced writes now fail. Unless the lease was let go
			// meanwhile (released, or its thread deleted by this Store,
			// which reports that itself), tell the run.
			select {
			case <-l.stop:
			default:
				if l.opts.Lost != nil {
					l.opts.Lost(s.lostEpoch(l.thread, l.epoch, checkpoint.LeaseTakenOver, "heartbeat"))
				}
			}
			return
		}
		d := l.renewedAt(sent)
		if l.opts.Renewed != nil {
			l.opts.Renewed(d)
		}
	}
}

// release stops the heartbeat and deletes the lease row if it still
// carries this lease's epoch.
func (s *Store) release(l *heldLease) {
	s.mu.Lock()
	mine := s.held[l.thread] == l
	if mine {
		delete(s.held, l.thread)
	}
	closed := s.closed
	s.mu.Unlock()
	if !mine || closed {
		return // released by Close, or its thread deleted by DeleteThread
	}
	l.stopHeartbeat()
	s.deleteLease(l)
}

// deleteLease deletes the lease row if it still carries l's epoch. A
// failure is harmless: the row expires after the TTL.
func (s *Store) deleteLease(l *heldLease) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.pool.Exec(ctx, s.q.dropLease, l.thread, l.epoch)
}

// lost is the error of a fenced write that found another epoch.
func (s *Store) lost(threadID string, epoch int64) error {
	return s.lostEpoch(threadID, epoch, checkpoint.LeaseTakenOver, "fenced write")
}

// lostEpoch is the error of the lease of threadID under epoch found lost.
func (s *Store) lostEpoch(threadID string, epoch int64, reason checkpoint.LeaseLostReason, found string) error {
	return &checkpoint.LeaseLostError{Thread: threadID, Store: "schema " + strconv.Quote(s.schema), Fence: strconv.FormatInt(epoch, 10), Reason: reason, Found: found}
}
