// Package pgside lets the queue's worker (runtime/postgres/workers) write
// a statement of its own in the same transaction as a run's last write
// under a lease of the PostgreSQL store: the request's outcome lands with
// the run's last events and the lease's release, in one round trip and
// one commit, or neither does.
//
// It is internal so that only the store and its queue use it: the store's
// leases implement Preparer; nothing outside this module can name it.
package pgside

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Then is a statement written after a run's last write, in its
// transaction.
type Then struct {
	// SQL and Args are the statement; it returns at most one row.
	SQL  string
	Args []any
	// Scan reads its row. An error other than pgx.ErrNoRows fails the
	// transaction (nothing is written); pgx.ErrNoRows does not.
	Scan func(pgx.Row) error
}

// Final is a run's last write, prepared (Preparer.PrepareFinal) and not
// yet sent. Its lease keeps the thread until it is written.
type Final interface {
	// Write sends the last write and, when then is not nil, then's
	// statement after it, in one transaction: both land or neither does,
	// and then's statement runs only when the lease's fence held. It
	// retries as the lease's Commit does. It returns ErrUnread when the
	// write committed but then's reply was lost on the way back (a cut
	// connection); its row is unknown.
	Write(ctx context.Context, then *Then) error
}

// ErrUnread says that a Final's write committed but the reply of its Then
// was lost: the caller reads what it needs back.
var ErrUnread = errors.New("the write committed but its reply was lost")

// Preparer is a lease that can prepare its run's last write to be sent
// later with a Then.
type Preparer interface {
	// PrepareFinal encodes cs, the run's last write: one commit (Release
	// set, the run's last events, and the checkpoint that ended the run or
	// none), or a batch of commits with checkpoints whose last is such a
	// commit (a checkpoint kept for the next write before it). It keeps
	// nothing of cs, and fails for any other write.
	PrepareFinal(cs ...checkpoint.Commit) (Final, error)
}

// LatestRead, which package postgres sets, returns for store, a
// *postgres.Store, the statement that reads the latest checkpoint of the
// thread the SQL expression thread names, with its chain, in the
// statement's own snapshot (as the store's Get does), and the function
// that makes the checkpoint of its rows (pgx.ErrNoRows when the thread has
// none). ok is false for another store. The worker sends the statement in
// the claim's transaction, after the claim took the thread's lease: what
// it reads is what the run would read under that lease, and the run does
// not read again.
var LatestRead func(store any, thread string) (sql string, read func(context.Context, pgx.Rows) (*checkpoint.Checkpoint, error), ok bool)
