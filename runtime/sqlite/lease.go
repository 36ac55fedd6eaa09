package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
)

// ErrLeaseLost is returned by a write of a thread whose lease this Store
// held but another process has taken over (after it expired without
// renewal) or deleted with the thread. Nothing was written; the run that
// held the lease must stop, the new holder owns the thread.
var ErrLeaseLost = errors.New("the thread's lease was taken over by another run (it expired without renewal, or the thread was deleted); this write was refused so the new holder's state is not overwritten")

// lostWhileHeld is what WatchLease's lost callback receives: the lease
// was found gone by the heartbeat, not by a write. It matches ErrLeaseLost.
type lostWhileHeld struct{ thread, path string }

func (e *lostWhileHeld) Error() string {
	return fmt.Sprintf("sqlite: the lease of thread %q in %q was taken over while this run held it (it expired without renewal, or the thread was deleted); the run was stopped so that it starts no effect the new holder will run as well", e.thread, e.path)
}

func (e *lostWhileHeld) Is(target error) bool { return target == ErrLeaseLost }

// heldLease is a lease this Store holds: its token and its heartbeat.
type heldLease struct {
	thread string
	token  string
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	// lost, when set (WatchLease), is told when the heartbeat finds the
	// lease gone.
	lost func(error)
}

func (l *heldLease) stopHeartbeatAsync() { l.once.Do(func() { close(l.stop) }) }

func (l *heldLease) stopHeartbeat() {
	l.stopHeartbeatAsync()
	<-l.done
}

// holder describes this process in the lease row, for busy errors.
var holder = func() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("pid %d on %s", os.Getpid(), host)
}()

// Lease takes the thread's lease for one run, across goroutines and
// processes. It fails at once, with an error matching runtime.ErrThreadBusy,
// while another live holder has it. release stops the heartbeat and deletes
// the lease; calling it again does nothing.
func (s *Store) Lease(ctx context.Context, threadID string) (func(), error) {
	return s.lease(ctx, threadID, nil)
}

// WatchLease is Lease, and calls lost with an error matching ErrLeaseLost
// as soon as the heartbeat finds that another process took the lease over
// or deleted the thread (within a third of the lease TTL), so the runtime
// cancels the run instead of letting it start effects the new holder will
// run again.
func (s *Store) WatchLease(ctx context.Context, threadID string, lost func(error)) (func(), error) {
	return s.lease(ctx, threadID, lost)
}

var _ runtime.LeaseWatcher = (*Store)(nil)

func (s *Store) lease(ctx context.Context, threadID string, lost func(error)) (func(), error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("sqlite: lease thread %q: the store %q is closed", threadID, s.path)
	}
	var b [16]byte
	rand.Read(b[:])
	l := &heldLease{thread: threadID, token: hex.EncodeToString(b[:]), stop: make(chan struct{}), done: make(chan struct{}), lost: lost}
	now := time.Now()
	res, err := s.ws[qTakeLease].ExecContext(ctx, threadID, l.token, holder, now.Add(s.opts.ttl).UnixNano(), now.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("sqlite: lease thread %q in %q: %w", threadID, s.path, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return nil, s.busy(ctx, threadID)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		close(l.done)
		s.deleteLease(l)
		return nil, fmt.Errorf("sqlite: lease thread %q: the store %q was closed", threadID, s.path)
	}
	s.held[threadID] = l
	s.mu.Unlock()
	go s.heartbeat(l)
	var once sync.Once
	return func() { once.Do(func() { s.release(l) }) }, nil
}

// busy builds the ErrThreadBusy error naming the lease's holder.
func (s *Store) busy(ctx context.Context, threadID string) error {
	var who string
	var expires int64
	err := s.rs[qLeaseHolder].QueryRowContext(ctx, threadID).Scan(&who, &expires)
	if err != nil {
		return fmt.Errorf("%w (thread %q in %q)", runtime.ErrThreadBusy, threadID, s.path)
	}
	return fmt.Errorf("%w (thread %q in %q is held by %s; the lease expires %s unless its holder renews it, which a live holder does every %v)",
		runtime.ErrThreadBusy, threadID, s.path, who, time.Unix(0, expires).Format(time.RFC3339Nano), s.opts.ttl/3)
}

// heartbeat renews the lease every TTL/3 until it is stopped or lost.
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
		res, err := s.ws[qRenewLease].ExecContext(ctx, time.Now().Add(s.opts.ttl).UnixNano(), l.thread, l.token)
		cancel()
		if err != nil {
			continue // busy or interrupted: try again at the next tick
		}
		if n, _ := res.RowsAffected(); n == 0 {
			// Lost: fenced writes now fail with ErrLeaseLost. Unless the
			// lease was let go meanwhile (released, or deleted with the
			// thread by this Store), tell the run.
			select {
			case <-l.stop:
			default:
				if l.lost != nil {
					l.lost(&lostWhileHeld{thread: l.thread, path: s.path})
				}
			}
			return
		}
	}
}

// release stops the heartbeat and deletes the lease row if it is still ours.
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

// deleteLease deletes the lease row if it still carries l's token. A failure
// is harmless: the row expires after the TTL.
func (s *Store) deleteLease(l *heldLease) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.busy+time.Second)
	defer cancel()
	s.ws[qDropLease].ExecContext(ctx, l.thread, l.token)
}

// holds reports whether this Store holds the thread's lease.
func (s *Store) holds(threadID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[threadID] != nil
}

// checkFence fails with ErrLeaseLost when this Store holds the thread's
// lease and the lease row no longer carries its token.
func (s *Store) checkFence(ctx context.Context, tx *sql.Tx, threadID string) error {
	s.mu.Lock()
	l := s.held[threadID]
	s.mu.Unlock()
	if l == nil {
		return nil
	}
	var owner string
	err := s.ws.in(ctx, tx, qLeaseOwner).QueryRowContext(ctx, threadID).Scan(&owner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrLeaseLost
	case err != nil:
		return fmt.Errorf("check lease: %w", err)
	case owner != l.token:
		return ErrLeaseLost
	}
	return nil
}
