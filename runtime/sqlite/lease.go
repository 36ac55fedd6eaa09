package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// ErrLeaseLost is checkpoint.ErrLeaseLost, matched by the error of a
// write of a thread whose lease this Store held but another process has
// taken over (after it expired without renewal) or deleted with the
// thread, and by what LeaseOptions.Lost receives. Nothing was written;
// the run that held the lease must stop, the new holder owns the thread.
// The error is a *checkpoint.LeaseLostError saying why.
var ErrLeaseLost = checkpoint.ErrLeaseLost

// lostLease is the error of l found lost for reason, by found.
func (s *Store) lostLease(l *heldLease, reason checkpoint.LeaseLostReason, found string) error {
	return &checkpoint.LeaseLostError{Thread: l.thread, Store: s.path, Fence: l.token, Reason: reason, Found: found}
}

// heldLease is a lease this Store holds: its token, its deadline and its
// heartbeat. It implements checkpoint.Lease.
type heldLease struct {
	s      *Store
	thread string
	token  string
	opts   checkpoint.LeaseOptions
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	rel    sync.Once

	mu       sync.Mutex
	deadline time.Time // monotonic: when the last renewal was sent + TTL - margin
	deleted  bool      // this Store deleted the thread; writes are refused
}

func (l *heldLease) Fence() string { return l.token }

func (l *heldLease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

func (l *heldLease) Release() { l.rel.Do(func() { l.s.release(l) }) }

// renewedAt moves the deadline to sent + TTL - margin, where sent is when
// the take or renewal that succeeded was sent.
func (l *heldLease) renewedAt(sent time.Time) time.Time {
	d := sent.Add(l.s.opts.ttl - l.s.opts.ttl/leaseMarginDiv)
	l.mu.Lock()
	l.deadline = d
	l.mu.Unlock()
	return d
}

// leaseMarginDiv sets the safety margin of a lease's local deadline: a
// tenth of the TTL before the row expires, for the time a renewal takes to
// reach the file and for the clocks of processes sharing it.
const leaseMarginDiv = 10

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
// while another live holder has it. A heartbeat renews it every TTL/3 and
// reports each renewal to opts.Renewed; when the heartbeat finds that
// another process took the lease over or deleted the thread (within a
// third of the TTL), opts.Lost receives an error matching ErrLeaseLost.
// The lease's Deadline is when the last renewal was sent plus the TTL
// minus a tenth of it.
func (s *Store) Lease(ctx context.Context, threadID string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("sqlite: lease thread %q: the store %q is closed", threadID, s.path)
	}
	var b [16]byte
	rand.Read(b[:])
	l := &heldLease{s: s, thread: threadID, token: hex.EncodeToString(b[:]), opts: opts, stop: make(chan struct{}), done: make(chan struct{})}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: lease thread %q in %q: %w", threadID, s.path, err)
	}
	// Once sent, the take is not abandoned half-way: a statement cancelled
	// after it wrote the row would leave the thread busy until the TTL.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.busy+30*time.Second)
	defer cancel()
	sent := time.Now()
	res, err := s.ws[qTakeLease].ExecContext(tctx, threadID, l.token, holder, sent.Add(s.opts.ttl).UnixNano(), sent.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("sqlite: lease thread %q in %q: %w", threadID, s.path, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return nil, s.busy(tctx, threadID)
	}
	l.renewedAt(sent)
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
	return l, nil
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
		sent := time.Now()
		res, err := s.ws[qRenewLease].ExecContext(ctx, sent.Add(s.opts.ttl).UnixNano(), l.thread, l.token)
		cancel()
		if err != nil {
			continue // busy or interrupted: try again at the next tick
		}
		if n, _ := res.RowsAffected(); n == 0 {
			// Lost: fenced writes now fail with ErrLeaseLost. Unless the
			// lease was let go meanwhile (released, or its thread deleted
			// by this Store, which reports that itself), tell the run.
			select {
			case <-l.stop:
			default:
				if l.opts.Lost != nil {
					l.opts.Lost(s.lostLease(l, checkpoint.LeaseTakenOver, "heartbeat"))
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
		return // released by Close, or its thread deleted by DeleteThread
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

// checkFence fails when l, the lease a run writes under, is no longer
// current: its thread was deleted by this Store (an error matching
// checkpoint.ErrThreadDeleted and ErrLeaseLost), or the lease row no longer
// carries its token (ErrLeaseLost). It runs in the write's transaction.
func (s *Store) checkFence(ctx context.Context, tx *sql.Tx, l *heldLease) error {
	threadID := l.thread
	l.mu.Lock()
	deleted := l.deleted
	l.mu.Unlock()
	if deleted {
		return s.lostLease(l, checkpoint.LeaseThreadDeleted, "fenced write")
	}
	var owner string
	err := s.ws.in(ctx, tx, qLeaseOwner).QueryRowContext(ctx, threadID).Scan(&owner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return s.lostLease(l, checkpoint.LeaseTakenOver, "fenced write")
	case err != nil:
		return fmt.Errorf("check lease: %w", err)
	case owner != l.token:
		return s.lostLease(l, checkpoint.LeaseTakenOver, "fenced write")
	}
	return nil
}

// Commit writes c in one transaction fenced by the lease: the checkpoint
// (full or delta), the dropped journals, the thread record and the events.
func (l *heldLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	s := l.s
	if c.Checkpoint != nil && c.Checkpoint.ThreadID != l.thread {
		return fmt.Errorf("sqlite: commit of checkpoint %s of thread %q under the lease of thread %q refused", c.Checkpoint.ID, c.Checkpoint.ThreadID, l.thread)
	}
	var put func(tx *sql.Tx) error
	if c.Checkpoint != nil {
		var err error
		if put, err = s.prepareCommit(ctx, c.Checkpoint, c.Delta, c.Done, c.Thread); err != nil {
			return err
		}
	}
	err := s.tx(ctx, l, func(tx *sql.Tx) error {
		if put != nil {
			if err := put(tx); err != nil {
				return err
			}
		} else if c.Thread != nil {
			if err := s.recordTx(ctx, tx, l.thread, c.Thread); err != nil {
				return fmt.Errorf("record the thread: %w", err)
			}
		}
		return s.appendEventsTx(ctx, tx, c.Events)
	})
	if err != nil {
		what := "the run's final write"
		if c.Checkpoint != nil {
			what = "checkpoint " + c.Checkpoint.ID
		}
		return fmt.Errorf("sqlite: commit %s of thread %q in %q: %w", what, l.thread, s.path, err)
	}
	return nil
}

// PutJournal replaces the journal of a task, fenced by the lease.
func (l *heldLease) PutJournal(ctx context.Context, taskID string, entries []checkpoint.JournalEntry) error {
	s := l.s
	raw, err := json.Marshal(entries)
	if err != nil {
		return fmt.Errorf("sqlite: put journal of task %q of thread %q: encode entries: %w", taskID, l.thread, err)
	}
	err = s.tx(ctx, l, func(tx *sql.Tx) error {
		_, err := s.ws.in(ctx, tx, qPutJournal).ExecContext(ctx, l.thread, taskID, raw)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: put journal of task %q of thread %q in %q: %w", taskID, l.thread, s.path, err)
	}
	return nil
}
