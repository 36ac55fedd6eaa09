package workers

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// This file holds the claim's read: the claimed thread's latest
// checkpoint, read in the claim's transaction by a statement sent right
// after the claim statement, in the same round trip. The claim statement
// takes the thread's lease; a takeover waits for the fenced writes in
// flight of the holder it replaces, and every fenced write after it
// finds another epoch. A statement that starts after the claim statement
// has ended therefore sees the last checkpoint any earlier holder wrote,
// and no later one can be written: what it reads is what the run would
// read under the lease, and the run starts from it without a round trip
// of its own.

// claimedThreadSetting is the transaction-local setting the claim
// statement leaves the claimed thread in ("" when it claimed nothing),
// and claimedThread the SQL of its value, for the read.
const (
	claimedThreadSetting = "ilmek.claimed_thread"
	claimedThread        = "current_setting('" + claimedThreadSetting + "', true)"
)

// claimRead is what the claim's read found: the thread's latest
// checkpoint, or none (the thread has no checkpoint).
type claimRead struct {
	cp   *checkpoint.Checkpoint
	none bool
}

// sendClaim sends the claim statement (sql, args; scan reads its row)
// and, when the store reads in the claim's transaction, the read after
// it in one batch, one transaction; it sets *read to what the read found
// (nil when the claim failed, the read was not sent, or its rows could
// not be made into a checkpoint: the run reads the thread itself). A read the server fails
// fails the claim (nothing of it is written) and is not sent again by
// this queue, so that no error of the read can keep a request from being
// claimed.
func (q *Queue) sendClaim(ctx context.Context, sql string, args []any, scan func(pgx.Row) error, read **claimRead) error {
	*read = nil
	if q.latestSQL == "" || q.noRead.Load() {
		return scan(q.store.Pool().QueryRow(ctx, sql, args...))
	}
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	b.Queue(q.latestSQL)
	br := q.store.Pool().SendBatch(ctx, b)
	if err := scan(br.QueryRow()); err != nil {
		br.Close()
		return err
	}
	rows, err := br.Query()
	if err == nil {
		var cp *checkpoint.Checkpoint
		cp, err = q.readLatest(ctx, rows)
		switch {
		case err == nil:
			*read = &claimRead{cp: cp}
		case errors.Is(err, pgx.ErrNoRows):
			*read, err = &claimRead{none: true}, nil
		default:
			var pe *pgconn.PgError
			if !errors.As(err, &pe) && !transient(err) {
				err = nil // rows that are no checkpoint: the run's own read says why
			}
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && !transient(err) {
		q.noRead.Store(true)
	}
	if err != nil {
		*read = nil
	}
	return err
}

// takeRead returns, once, what the claim's read found, when the run asks
// for the latest checkpoint of the claimed thread under the lease the
// claim took (and nothing else was asked of the thread before); nil
// otherwise.
func (s *claimedStore) takeRead(thread, id string) *claimRead {
	if thread != s.thread || id != "" || !s.used.Load() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.read
	s.read = nil
	return r
}

// Get returns the claim's read for the run's first read of the claimed
// thread's latest checkpoint, and otherwise asks the Store.
func (s *claimedStore) Get(ctx context.Context, thread, id string) (*checkpoint.Checkpoint, error) {
	if r := s.takeRead(thread, id); r != nil {
		if r.none {
			return nil, runtime.ErrNotFound
		}
		return r.cp, nil
	}
	return s.Store.Get(ctx, thread, id)
}

// GetLatest is Get for checkpoint.LatestReader: the checkpoint of the
// claim's read comes without its channels when its ID is known.
func (s *claimedStore) GetLatest(ctx context.Context, thread, known string) (*checkpoint.Checkpoint, error) {
	if r := s.takeRead(thread, ""); r != nil {
		if r.none {
			return nil, runtime.ErrNotFound
		}
		if known != "" && r.cp.ID == known {
			r.cp.Channels = nil
		}
		return r.cp, nil
	}
	return s.Store.GetLatest(ctx, thread, known)
}
