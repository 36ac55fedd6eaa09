package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime"
)

// ErrLeaseLost is matched (errors.Is) by the error of a write of a thread
// whose lease this Store held but another run has taken over (after it
// expired without renewal) or deleted with the thread, and by the error
// WatchLease reports when the heartbeat finds the lease gone or cannot
// renew it before its local deadline. Nothing was written; the run that
// held the lease must stop, the new holder owns the thread.
var ErrLeaseLost = errors.New("the thread's lease was lost: another run took it over after it expired unrenewed, or the thread was deleted; the write was refused so the new holder's state is not overwritten")

// LeaseLostError says which lease was lost and why. It matches ErrLeaseLost.
type LeaseLostError struct {
	Thread string
	Schema string
	// Epoch is the lost lease's epoch.
	Epoch int64
	// Reason says how the loss was found: "fenced write", "heartbeat"
	// (the lease row has another epoch or is gone) or "local deadline"
	// (no renewal reached the server within the TTL).
	Reason string
}

func (e *LeaseLostError) Error() string {
	return fmt.Sprintf("postgres: lease of thread %q (epoch %d) in schema %q lost (%s): another run took it over after it expired unrenewed, or the thread was deleted; the run must stop so that it starts no effect the new holder runs as well", e.Thread, e.Epoch, e.Schema, e.Reason)
}

// Is makes a LeaseLostError match ErrLeaseLost.
func (e *LeaseLostError) Is(target error) bool { return target == ErrLeaseLost }

// heldLease is a lease this Store holds: its epoch and its heartbeat.
type heldLease struct {
	thread string
	epoch  int64
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	// lost, when set (WatchLease), is told when the heartbeat finds the
	// lease gone or its local deadline passed.
	lost func(error)
}

func (l *heldLease) stopHeartbeatAsync() { l.once.Do(func() { close(l.stop) }) }

func (l *heldLease) stopHeartbeat() {
	l.stopHeartbeatAsync()
	<-l.done
}

// Lease takes the thread's lease for one run, across goroutines, processes
// and machines. It fails at once, with an error matching
// runtime.ErrThreadBusy, while another live holder has it. release stops
// the heartbeat and deletes the lease; calling it again does nothing.
func (s *Store) Lease(ctx context.Context, threadID string) (func(), error) {
	return s.lease(ctx, threadID, nil)
}

// WatchLease is Lease, and calls lost with an error matching ErrLeaseLost
// as soon as the heartbeat finds that another run took the lease over or
// deleted the thread, or when no renewal reached the server before the
// lease's local deadline (the TTL after the last renewal was sent), so the
// runtime cancels the run instead of letting it start effects the new
// holder will run again.
func (s *Store) WatchLease(ctx context.Context, threadID string, lost func(error)) (func(), error) {
	return s.lease(ctx, threadID, lost)
}

var _ runtime.LeaseWatcher = (*Store)(nil)

func (s *Store) lease(ctx context.Context, threadID string, lost func(error)) (func(), error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("postgres: lease thread %q: the store on %s is closed", threadID, s.where())
	}
	sent := time.Now()
	var epoch int64
	err := s.pool.QueryRow(ctx, s.q.takeLease, threadID, s.opts.owner, s.opts.ttl.Microseconds()).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, s.busy(ctx, threadID)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: lease thread %q in %s: %w", threadID, s.where(), err)
	}
	l := &heldLease{thread: threadID, epoch: epoch, stop: make(chan struct{}), done: make(chan struct{}), lost: lost}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		close(l.done)
		s.deleteLease(l)
		return nil, fmt.Errorf("postgres: lease thread %q: the store on %s was closed", threadID, s.where())
	}
	s.held[threadID] = l
	s.mu.Unlock()
	go s.heartbeat(l, sent.Add(s.opts.ttl))
	var once sync.Once
	return func() { once.Do(func() { s.release(l) }) }, nil
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

// heartbeat renews the lease every TTL/3 until it is stopped or lost. The
// lease is lost when a renewal finds another epoch (or no row), and also
// when no renewal succeeded before deadline, the local time by which the
// server may consider the lease expired: the holder can then no longer be
// sure it holds it.
func (s *Store) heartbeat(l *heldLease, deadline time.Time) {
	defer close(l.done)
	t := time.NewTicker(s.opts.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		sent := time.Now()
		reason := ""
		if sent.After(deadline) {
			reason = "local deadline"
		} else {
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			tag, err := s.pool.Exec(ctx, s.q.renewLease, l.thread, l.epoch, s.opts.ttl.Microseconds())
			cancel()
			switch {
			case err == nil && tag.RowsAffected() == 1:
				deadline = sent.Add(s.opts.ttl)
				continue
			case err == nil:
				reason = "heartbeat"
			case time.Now().After(deadline):
				reason = "local deadline"
			default:
				continue // the server did not answer: try again at the next tick
			}
		}
		// Lost: fenced writes now fail. Unless the lease was let go
		// meanwhile (released, or deleted with the thread by this Store),
		// tell the run.
		select {
		case <-l.stop:
		default:
			if l.lost != nil {
				l.lost(&LeaseLostError{Thread: l.thread, Schema: s.schema, Epoch: l.epoch, Reason: reason})
			}
		}
		return
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
		return // released by Close or forgotten by DeleteThread
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

// epoch returns the epoch of the thread's lease when this Store holds it.
func (s *Store) epoch(threadID string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.held[threadID]; l != nil {
		return l.epoch, true
	}
	return 0, false
}

// lost is the error of a fenced write that found another epoch.
func (s *Store) lost(threadID string, epoch int64) error {
	return &LeaseLostError{Thread: threadID, Schema: s.schema, Epoch: epoch, Reason: "fenced write"}
}
