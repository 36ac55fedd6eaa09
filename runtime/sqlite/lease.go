package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// ErrLeaseLost is checkpoint.ErrLeaseLost, matched by the error of a
// write of a thread whose lease this Store held but another process has
// taken over (after it expired without renewal) or deleted with the
// thread, and by what LeaseOptions.Lost receives. Nothing was written;
// the run that held the lease must stop, the new holder owns the thread.
// The error is a *checkpoint.LeaseLostError saying why.
var ErrLeaseLost = checkpoint.ErrLeaseLost

// heldLease is a lease this Store holds: the shared lease state and
// heartbeat (store.Lease), and its token in the lease row. It implements
// checkpoint.Lease.
type heldLease struct {
	store.Lease
	s *Store
}

// Renew extends the lease row if it still carries the token.
func (l *heldLease) Renew(ctx context.Context) (bool, error) {
	res, err := l.s.ws[qRenewLease].ExecContext(ctx, time.Now().Add(l.s.opts.ttl).UnixNano(), l.Thread, l.Fence())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Drop deletes the lease row if it still carries the token.
func (l *heldLease) Drop() {
	ctx, cancel := context.WithTimeout(context.Background(), l.s.opts.busy+time.Second)
	defer cancel()
	l.s.ws[qDropLease].ExecContext(ctx, l.Thread, l.Fence())
}

// Lost is the error of the lease found lost for reason, by found.
func (l *heldLease) Lost(reason checkpoint.LeaseLostReason, found string) error {
	return &checkpoint.LeaseLostError{Thread: l.Thread, Store: l.s.path, Fence: l.Fence(), Reason: reason, Found: found}
}

// Lease takes the thread's lease for one run, across goroutines and
// processes. It fails at once, with an error matching runtime.ErrThreadBusy,
// while another live holder has it. A heartbeat renews it every TTL/3 and
// reports each renewal to opts.Renewed; when the heartbeat finds that
// another process took the lease over or deleted the thread (within a
// third of the TTL), opts.Lost receives an error matching ErrLeaseLost.
// The lease's Deadline is when the last renewal was sent plus the TTL
// minus a tenth of it.
func (s *Store) Lease(ctx context.Context, threadID string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	var b [16]byte
	rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	l := &heldLease{s: s}
	var busy error
	held, err := s.leases.Take(ctx, &l.Lease, threadID, opts, s.opts.busy+30*time.Second,
		func(ctx context.Context, sent time.Time) (string, store.Row, bool, error) {
			res, err := s.ws[qTakeLease].ExecContext(ctx, threadID, token, store.Holder, sent.Add(s.opts.ttl).UnixNano(), sent.UnixNano())
			if err != nil {
				return "", nil, false, err
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				var who string
				var expires int64
				err := s.rs[qLeaseHolder].QueryRowContext(ctx, threadID).Scan(&who, &expires)
				busy = s.leases.Busy(threadID, strconv.Quote(s.path), who, time.Unix(0, expires), err == nil)
				return "", nil, false, nil
			}
			return token, l, true, nil
		})
	switch {
	case err != nil:
		return nil, fmt.Errorf("sqlite: lease thread %q in %q: %w", threadID, s.path, err)
	case !held:
		return nil, busy
	}
	return l, nil
}

// checkFence fails when l, the lease a run writes under, is no longer
// current: its thread was deleted by this Store (an error matching
// checkpoint.ErrThreadDeleted and ErrLeaseLost), or the lease row no longer
// carries its token (ErrLeaseLost). It runs in the write's transaction.
func (s *Store) checkFence(ctx context.Context, tx *sql.Tx, l *heldLease) error {
	if err := l.Refused(); err != nil {
		return err
	}
	var owner string
	err := s.ws.in(ctx, tx, qLeaseOwner).QueryRowContext(ctx, l.Thread).Scan(&owner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return l.Lost(checkpoint.LeaseTakenOver, "fenced write")
	case err != nil:
		return fmt.Errorf("check lease: %w", err)
	case owner != l.Fence():
		return l.Lost(checkpoint.LeaseTakenOver, "fenced write")
	}
	return nil
}

// Commit writes c in one transaction fenced by the lease: the checkpoint
// (full or delta), the dropped journals, the thread record and the events.
func (l *heldLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	body, fenced, err := l.commitBody(c)
	if err == nil {
		err = l.write(ctx, c.Release, fenced, body)
	}
	if err != nil {
		what := "the run's final write"
		if c.Checkpoint != nil {
			what = "checkpoint " + c.Checkpoint.ID
		}
		return fmt.Errorf("sqlite: commit %s of thread %q in %q: %w", what, l.Thread, l.s.path, err)
	}
	l.committed(c)
	return nil
}

// CommitBatch writes the commits cs and then the journal j (when not
// nil) in one transaction fenced by the lease (checkpoint.BatchLease):
// through the group commit, one write of it and one flush for all of them.
func (l *heldLease) CommitBatch(ctx context.Context, cs []checkpoint.Commit, j *checkpoint.JournalWrite) error {
	bodies := make([]func(context.Context, *sql.Tx) error, 0, len(cs)+1)
	release, fenced := false, false
	for i, c := range cs {
		body, f, err := l.commitBody(c)
		if err != nil {
			return fmt.Errorf("sqlite: commit a batch of thread %q in %q: %w", l.Thread, l.s.path, err)
		}
		bodies = append(bodies, body)
		release = release || c.Release
		if i == 0 {
			// The batch is fenced by its first write when that checks
			// the lease itself: the rest follow it in its transaction.
			fenced = f
		}
	}
	if j != nil {
		raw, err := json.Marshal(j.Entries)
		if err != nil {
			return fmt.Errorf("sqlite: commit a batch of thread %q in %q: encode the journal of task %q: %w", l.Thread, l.s.path, j.TaskID, err)
		}
		bodies = append(bodies, func(ctx context.Context, tx *sql.Tx) error {
			_, err := l.s.ws.in(ctx, tx, qPutJournal).ExecContext(ctx, l.Thread, j.TaskID, raw)
			return err
		})
	}
	err := l.write(ctx, release, fenced, func(ctx context.Context, tx *sql.Tx) error {
		for _, body := range bodies {
			if err := body(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: commit %s of thread %q in %q: %w", store.BatchWhat(cs, j), l.Thread, l.s.path, err)
	}
	for _, c := range cs {
		l.committed(c)
	}
	return nil
}

// commitBody returns the part of a transaction that writes c: its
// checkpoint, the thread record, the events, and the lease's release
// when c is the run's last write. fenced reports that the body checks
// the lease itself (prepareCommit): its checkpoint is written first.
func (l *heldLease) commitBody(c checkpoint.Commit) (body func(context.Context, *sql.Tx) error, fenced bool, err error) {
	s := l.s
	if c.Checkpoint != nil && c.Checkpoint.ThreadID != l.Thread {
		return nil, false, fmt.Errorf("checkpoint %s of thread %q under the lease of thread %q refused", c.Checkpoint.ID, c.Checkpoint.ThreadID, l.Thread)
	}
	put := func(context.Context, *sql.Tx) error { return nil }
	if c.Checkpoint != nil {
		if put, fenced, err = s.prepareCommit(c.Checkpoint, c.Delta, c.Done, l); err != nil {
			return nil, false, err
		}
	}
	return func(ctx context.Context, tx *sql.Tx) error {
		err := store.Commit(c, func() error { return put(ctx, tx) },
			func(w *checkpoint.ThreadWrite) error { return s.recordTx(ctx, tx, l.Thread, w) },
			func(ev []checkpoint.StoredEvent) error { return s.appendEventsTx(ctx, tx, ev) })
		if err == nil && c.Release {
			// The run's last write gives the lease back with it.
			_, err = s.ws.in(ctx, tx, qDropLease).ExecContext(ctx, l.Thread, l.Fence())
		}
		return err
	}, fenced, nil
}

// write runs body through the group commit, fenced (by a statement of its
// own, or by body itself when fenced); release says it gives the lease
// back.
func (l *heldLease) write(ctx context.Context, release, fenced bool, body func(context.Context, *sql.Tx) error) error {
	if release {
		// A renewal would find the row gone and report the lease lost.
		l.StopHeartbeat()
	}
	return l.s.groupTx(ctx, l, fenced, body)
}

// committed records what the written commit c changed: the Store's cache
// of channels, and the lease when c gave it back.
func (l *heldLease) committed(c checkpoint.Commit) {
	if c.Checkpoint != nil {
		l.s.cached(c.Checkpoint, c.Delta)
	}
	if c.Release {
		l.Released()
	}
}

var _ checkpoint.BatchLease = (*heldLease)(nil)
