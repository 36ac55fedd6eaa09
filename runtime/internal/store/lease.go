package store

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Holder names this process in the lease rows a store writes: "pid N on
// HOST".
var Holder = func() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("pid %d on %s", os.Getpid(), host)
}()

// Row is a store's side of one held lease: its lease row.
type Row interface {
	// Renew extends the lease row for another TTL if it still carries the
	// lease's fence; held is false when it does not (the lease is lost).
	Renew(ctx context.Context) (held bool, err error)
	// Drop deletes the lease row if it still carries the lease's fence. A
	// failure is harmless: the row expires after the TTL.
	Drop()
	// Lost is the error of the lease found lost for reason, by found.
	Lost(reason checkpoint.LeaseLostReason, found string) error
}

// Lease is the state of a lease a store holds: its fence, its deadline,
// its heartbeat and whether the store deleted its thread. A store's lease
// type embeds it and adds the fenced writes; Lease gives Fence, Deadline
// and Release of checkpoint.Lease.
type Lease struct {
	// Thread is the id of the leased thread.
	Thread string
	// Opts are what the run asked to be told (renewals, loss).
	Opts checkpoint.LeaseOptions

	set   *Leases
	row   Row
	fence string
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	rel   sync.Once

	mu       sync.Mutex
	deadline time.Time // monotonic: when the last renewal was sent + TTL - margin
	deleted  bool      // the store deleted the thread; writes are refused
}

// Fence returns the value that fences the lease's writes.
func (l *Lease) Fence() string { return l.fence }

// Deadline is when the last successful renewal (or the take) was sent,
// plus the TTL minus a tenth of it.
func (l *Lease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// Release gives the lease back: it stops the heartbeat and drops the row
// if it is still this lease's. Later calls, and calls after the store was
// closed or deleted the thread, do nothing.
func (l *Lease) Release() { l.rel.Do(l.set.release(l)) }

// StopHeartbeat stops l's renewals, before a commit that deletes its row
// (checkpoint.Commit.Release): a renewal would find the row gone and report
// the lease lost. Release still lets l go.
func (l *Lease) StopHeartbeat() { l.stopHeartbeat() }

// Released lets l go after a commit deleted its row
// (checkpoint.Commit.Release): Release then does nothing.
func (l *Lease) Released() { l.rel.Do(l.set.forget(l)) }

// Refused is the error of a write under l when the store deleted l's
// thread (matching checkpoint.ErrThreadDeleted and ErrLeaseLost); nil
// otherwise.
func (l *Lease) Refused() error {
	l.mu.Lock()
	deleted := l.deleted
	l.mu.Unlock()
	if deleted {
		return l.row.Lost(checkpoint.LeaseThreadDeleted, "fenced write")
	}
	return nil
}

// leaseMarginDiv sets the safety margin of a lease's local deadline: a
// tenth of the TTL before the row expires, for the time a renewal takes to
// reach the database and for the drift of the clocks.
const leaseMarginDiv = 10

// renewedAt moves the deadline to sent + TTL - margin, where sent is when
// the take or renewal that succeeded was sent.
func (l *Lease) renewedAt(sent time.Time) time.Time {
	d := sent.Add(l.set.ttl - l.set.ttl/leaseMarginDiv)
	l.mu.Lock()
	l.deadline = d
	l.mu.Unlock()
	return d
}

// Backdate moves the deadline to sent + TTL - margin, for a lease whose
// row a statement sent at sent (before Take) took.
func (l *Lease) Backdate(sent time.Time) { l.renewedAt(sent) }

func (l *Lease) stopHeartbeatAsync() { l.once.Do(func() { close(l.stop) }) }

func (l *Lease) stopHeartbeat() {
	l.stopHeartbeatAsync()
	<-l.done
}

// heartbeat renews the lease every TTL/3 until it is stopped or lost. A
// renewal that finds the row gone or another holder's reports the loss.
// One that fails is retried at the next tick; meanwhile the local deadline
// stays where it was, and once it has passed the runtime starts no effect
// (checkpoint.LeaseDeadlinePassed).
func (l *Lease) heartbeat() {
	defer close(l.done)
	ttl := l.set.ttl
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), ttl/3)
		sent := time.Now()
		held, err := l.row.Renew(ctx)
		cancel()
		if err != nil {
			continue // busy or unreachable: try again at the next tick
		}
		if !held {
			// Lost: fenced writes now fail. Unless the lease was let go
			// meanwhile (released, or its thread deleted by the store,
			// which reports that itself), tell the run.
			select {
			case <-l.stop:
			default:
				if l.Opts.Lost != nil {
					l.Opts.Lost(l.row.Lost(checkpoint.LeaseTakenOver, "heartbeat"))
				}
			}
			return
		}
		d := l.renewedAt(sent)
		if l.Opts.Renewed != nil {
			l.Opts.Renewed(d)
		}
	}
}

// Leases are the leases one store holds, by thread id.
type Leases struct {
	ttl time.Duration

	mu     sync.Mutex
	held   map[string]*Lease
	closed bool
}

// NewLeases returns the lease set of a store whose leases last ttl without
// renewal.
func NewLeases(ttl time.Duration) *Leases {
	return &Leases{ttl: ttl, held: map[string]*Lease{}}
}

// ErrClosed is the error of a lease taken on a store that is closed.
var ErrClosed = fmt.Errorf("the store is closed")

// Closed reports whether Close was called.
func (s *Leases) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Take runs take, the store's statement that takes the thread's lease row,
// with a context that is not cancelled once the statement is sent (a take
// abandoned after it wrote the row would leave the thread busy until the
// TTL) and lasts budget. take returns the new lease's fence and row, or
// held false when another live holder has the lease. On success l, the
// Lease the store's lease type embeds, holds the lease and its heartbeat
// runs. It fails with ErrClosed on a closed store.
func (s *Leases) Take(ctx context.Context, l *Lease, thread string, opts checkpoint.LeaseOptions, budget time.Duration,
	take func(ctx context.Context, sent time.Time) (fence string, row Row, held bool, err error)) (held bool, err error) {
	if s.Closed() {
		return false, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	defer cancel()
	sent := time.Now()
	fence, row, held, err := take(tctx, sent)
	if err != nil || !held {
		return held, err
	}
	*l = Lease{Thread: thread, Opts: opts, set: s, row: row, fence: fence, stop: make(chan struct{}), done: make(chan struct{})}
	l.renewedAt(sent)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		close(l.done)
		row.Drop()
		return false, ErrClosed
	}
	s.held[thread] = l
	s.mu.Unlock()
	go l.heartbeat()
	return true, nil
}

// release is Release of l.
func (s *Leases) release(l *Lease) func() {
	return func() {
		if s.drop(l) {
			l.stopHeartbeat()
			l.row.Drop()
		}
	}
}

// forget is Released of l: its row is gone already.
func (s *Leases) forget(l *Lease) func() {
	return func() {
		if s.drop(l) {
			l.stopHeartbeat()
		}
	}
}

// drop removes l from the held leases, and reports whether its row is
// still to be let go: false when Close released it, or its thread was
// deleted.
func (s *Leases) drop(l *Lease) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	mine := s.held[l.Thread] == l
	if mine {
		delete(s.held, l.Thread)
	}
	return mine && !s.closed
}

// Close stops the heartbeats of the leases still held and drops their
// rows. It returns false when the set was closed already.
func (s *Leases) Close() bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.closed = true
	held := s.held
	s.held = map[string]*Lease{}
	s.mu.Unlock()
	for _, l := range held {
		l.stopHeartbeat()
		l.row.Drop()
	}
	return true
}

// Deleting is the start of a store's DeleteThread: the lease this store
// holds on the thread, if any, is marked deleted before the rows go (so
// no write of its run slips in between; its writes stay refused and its
// release does nothing) and its heartbeat stops. The store calls the
// returned func once the rows are gone: it tells the run
// (LeaseOptions.Lost, an error matching checkpoint.ErrThreadDeleted).
func (s *Leases) Deleting(thread string) (told func()) {
	s.mu.Lock()
	l := s.held[thread]
	delete(s.held, thread)
	s.mu.Unlock()
	if l == nil {
		return func() {}
	}
	l.mu.Lock()
	already := l.deleted
	l.deleted = true
	l.mu.Unlock()
	l.stopHeartbeatAsync()
	if already || l.Opts.Lost == nil {
		return func() {}
	}
	return func() { l.Opts.Lost(l.row.Lost(checkpoint.LeaseThreadDeleted, "delete")) }
}

// Busy is the error of a lease take that found another live holder: it
// matches checkpoint.ErrThreadBusy and names the holder who (when found)
// and when its lease expires.
func (s *Leases) Busy(thread, where, who string, expires time.Time, found bool) error {
	if !found {
		return fmt.Errorf("%w (thread %q in %s)", checkpoint.ErrThreadBusy, thread, where)
	}
	return fmt.Errorf("%w (thread %q in %s is held by %s; the lease expires %s unless its holder renews it, which a live holder does every %v)",
		checkpoint.ErrThreadBusy, thread, where, who, expires.UTC().Format(time.RFC3339Nano), s.ttl/3)
}
