package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store"
)

// Put stores cp and drops the journals of the task ids in done, in one
// transaction, unleased (a run commits through its lease). A checkpoint id
// must be unique within its thread.
func (s *Store) Put(ctx context.Context, cp *runtime.Checkpoint, done []string) error {
	if len(done) == 0 && cp != nil && cp.ID != "" && len(cp.Channels) <= bigChannels {
		// One statement commits atomically on its own.
		args, err := checkpointArgs(cp)
		if err == nil {
			err = insertCheckpoint(ctx, s.ws[qInsertCheckpoint], s.ws[qInsertVersion], args)
		}
		if err != nil {
			return fmt.Errorf("sqlite: put checkpoint %s of thread %q in %q: %w", cp.ID, cp.ThreadID, s.path, err)
		}
		s.cache.put(cp.ThreadID, cp.ID, cp.Channels)
		return nil
	}
	return s.putUnleased(ctx, cp, nil, done)
}

// insertCheckpoint runs insert (qInsertCheckpoint) with args, and when
// the checkpoint's version has no row yet, adds it (version,
// qInsertVersion) and runs insert again.
func insertCheckpoint(ctx context.Context, insert, version *sql.Stmt, args []any) error {
	_, err := insert.ExecContext(ctx, args...)
	if err == nil || !strings.Contains(err.Error(), "NOT NULL constraint failed: ilmek_checkpoints.vid") {
		return err
	}
	if _, err := version.ExecContext(ctx, args[9], args[10], args[11]); err != nil {
		return fmt.Errorf("add its graph version: %w", err)
	}
	_, err = insert.ExecContext(ctx, args...)
	return err
}

// placeChannels returns what a checkpoint row holds of its channels ch,
// in tx: ch in the row (big nil), or, when ch is larger than bigChannels,
// no channels in the row and big, the id of ch stored in ilmek_channels.
func (s *Store) placeChannels(ctx context.Context, tx *sql.Tx, ch []byte) (inRow, big any, err error) {
	if len(ch) <= bigChannels {
		return ch, nil, nil
	}
	res, err := s.ws.in(ctx, tx, qInsertChannels).ExecContext(ctx, ch)
	if err != nil {
		return nil, nil, fmt.Errorf("store its channels: %w", err)
	}
	rid, err := res.LastInsertId()
	if err != nil {
		return nil, nil, fmt.Errorf("store its channels: %w", err)
	}
	return nil, rid, nil
}

// putUnleased is Put (d nil) or PutDelta in one transaction.
func (s *Store) putUnleased(ctx context.Context, cp *runtime.Checkpoint, d *checkpoint.Delta, done []string) error {
	put, _, err := s.prepareCommit(cp, d, done, nil)
	if err != nil {
		return err
	}
	if err := s.tx(ctx, nil, func(tx *sql.Tx) error { return put(ctx, tx) }); err != nil {
		return fmt.Errorf("sqlite: put checkpoint %s of thread %q in %q: %w", cp.ID, cp.ThreadID, s.path, err)
	}
	s.cached(cp, d)
	return nil
}

// cached records in the Store's cache the channels of cp, just stored in
// full, or as the delta d when d is not nil.
func (s *Store) cached(cp *runtime.Checkpoint, d *checkpoint.Delta) {
	if d == nil {
		s.cache.put(cp.ThreadID, cp.ID, cp.Channels)
	} else {
		s.cache.extend(cp.ThreadID, cp.ID, d.Base, d.Writes)
	}
}

// checkpointArgs encodes cp as the arguments of qInsertCheckpoint, a full
// snapshot.
//
// Its places: 0 thread, 1 id, 2 parent, 3 plan (nil: the id), 4 step,
// 5 created, 6 channels, 7 next, 8 pending, 9 fingerprint, 10 format,
// 11 migrated from, 12 base ("" for a snapshot, nil: the parent),
// 13 snap_seq, 14 depth, 15 chain bytes.
func checkpointArgs(cp *runtime.Checkpoint) ([]any, error) {
	c, err := store.EncodeCheckpoint(cp)
	if err != nil {
		return nil, err
	}
	var plan any = cp.PlanID
	if cp.PlanID == cp.ID {
		plan = nil
	}
	return []any{cp.ThreadID, cp.ID, cp.ParentID, plan, cp.Step, c.Created, c.Channels, c.Next, c.Pending, cp.Fingerprint, cp.Format, cp.MigratedFrom, "", 0, 0, 0, nil}, nil
}

// prepareCommit encodes cp (as the delta d when d is not nil) and returns
// the body of the transaction that stores it and drops the journals of
// done. Under the lease l (nil for none), fenced reports that the body's
// first statement checks the lease itself (qInsertDeltaFenced), so the
// transaction needs no fence statement before it: the body then checks
// the fence before it writes anything else (the delta's slow way).
func (s *Store) prepareCommit(cp *runtime.Checkpoint, d *checkpoint.Delta, done []string, l *heldLease) (body func(context.Context, *sql.Tx) error, fenced bool, err error) {
	if cp == nil || cp.ID == "" {
		return nil, false, fmt.Errorf("sqlite: a checkpoint write in %q: the checkpoint is nil or has no ID", s.path)
	}
	args, err := checkpointArgs(cp)
	if err != nil {
		return nil, false, fmt.Errorf("sqlite: put checkpoint %s of thread %q: %w", cp.ID, cp.ThreadID, err)
	}
	chans := args[6]
	if d != nil {
		writes, err := json.Marshal(d.Writes)
		if err != nil {
			return nil, false, fmt.Errorf("sqlite: put checkpoint %s of thread %q: encode its delta: %w", cp.ID, cp.ThreadID, err)
		}
		chans = writes
	}
	var fast []any // qInsertDelta's arguments, when it may do
	q := qInsertDelta
	if d != nil && !s.slowDeltas {
		fast = s.fastDeltaArgs(cp, *d, args, chans.([]byte))
		if fast != nil && l != nil {
			q, fast, fenced = qInsertDeltaFenced, append(fast, l.Fence()), true
		}
	}
	return func(ctx context.Context, tx *sql.Tx) error {
		if fast != nil {
			if fenced {
				if err := l.Refused(); err != nil {
					return err
				}
			}
			switch ok, err := s.fastDelta(ctx, tx, q, fast); {
			case err != nil:
				return err
			case ok:
				return s.dropJournalsTx(ctx, tx, cp.ThreadID, done)
			}
			if fenced {
				// Nothing was written: the lease is lost, or the delta
				// takes the slow way, fenced as any other write.
				if err := s.checkFence(ctx, tx, l); err != nil {
					return err
				}
			}
		}
		// Each try starts from what was encoded: a batch whose commit
		// failed tries its writes again, alone, and a try changes args
		// (a compaction's full channels, channels stored apart).
		args[6], args[16] = chans, nil
		if d != nil {
			if err := s.deltaArgs(ctx, tx, cp, *d, args); err != nil {
				return fmt.Errorf("as a delta of %s: %w", d.Base, err)
			}
		}
		return s.putTx(ctx, tx, args, cp.ThreadID, done)
	}, fenced, nil
}

// putTx inserts a checkpoint and drops the journals of done, in tx.
func (s *Store) putTx(ctx context.Context, tx *sql.Tx, args []any, threadID string, done []string) error {
	ch, _ := args[6].([]byte)
	var err error
	if args[6], args[16], err = s.placeChannels(ctx, tx, ch); err != nil {
		return err
	}
	if err := insertCheckpoint(ctx, s.ws.in(ctx, tx, qInsertCheckpoint), s.ws.in(ctx, tx, qInsertVersion), args); err != nil {
		return err
	}
	return s.dropJournalsTx(ctx, tx, threadID, done)
}

// dropJournalsTx drops the journals of the tasks done of the thread, in
// tx.
func (s *Store) dropJournalsTx(ctx context.Context, tx *sql.Tx, threadID string, done []string) error {
	if len(done) == 0 {
		return nil
	}
	del := s.ws.in(ctx, tx, qDropJournal)
	for _, id := range done {
		if _, err := del.ExecContext(ctx, threadID, id); err != nil {
			return fmt.Errorf("drop journal of task %q: %w", id, err)
		}
	}
	return nil
}

// Get returns the checkpoint id of the thread, or the one Put most recently
// when id is "", or runtime.ErrNotFound.
func (s *Store) Get(ctx context.Context, threadID, id string) (*runtime.Checkpoint, error) {
	cp, err := s.get(ctx, threadID, id, "")
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, runtime.ErrNotFound
	case err != nil:
		what := "latest checkpoint"
		if id != "" {
			what = "checkpoint " + id
		}
		return nil, fmt.Errorf("sqlite: get %s of thread %q from %q: %w", what, threadID, s.path, err)
	}
	return cp, nil
}

var _ checkpoint.LatestReader = (*Store)(nil)

// GetLatest returns the thread's latest checkpoint, as Get does, without
// its channels when its ID is known (checkpoint.LatestReader): only its
// row is read (a delta's own writes, a snapshot's channels), not its
// chain, and no channels are rebuilt.
func (s *Store) GetLatest(ctx context.Context, threadID, known string) (*runtime.Checkpoint, error) {
	cp, err := s.get(ctx, threadID, "", known)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, runtime.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("sqlite: get latest checkpoint of thread %q from %q: %w", threadID, s.path, err)
	}
	return cp, nil
}

// get reads a checkpoint and, when it is stored as a delta, the chain it
// is rebuilt from, in one read transaction: a snapshot of the file, so a
// concurrent write or delete cannot tear the chain. A checkpoint whose id
// is known is returned without its channels.
func (s *Store) get(ctx context.Context, threadID, id, known string) (*runtime.Checkpoint, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: s.r != s.w})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var row *sql.Row
	if id == "" {
		row = tx.StmtContext(ctx, s.rs[qLatest]).QueryRowContext(ctx, threadID)
	} else {
		row = tx.StmtContext(ctx, s.rs[qByID]).QueryRowContext(ctx, threadID, id)
	}
	cp, base, snap, err := scanCheckpoint(row)
	switch {
	case err != nil:
		return nil, err
	case known != "" && cp.ID == known:
		cp.Channels = nil
		return cp, nil
	case base == "":
		if id == "" {
			s.cache.put(threadID, cp.ID, cp.Channels)
		}
		return cp, nil
	}
	if ch, ok := s.cache.full(threadID, cp.ID); ok {
		cp.Channels = ch
		return cp, nil
	}
	if ch, ok := s.cache.full(threadID, base); ok {
		// The chain up to the base is known: apply cp's own writes.
		full, err := checkpoint.RebuildChain(cp.Channels, base, map[string]checkpoint.ChainLink{base: {Channels: ch}})
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", cp.ID, err)
		}
		cp.Channels = full
	} else if err := s.rebuild(ctx, tx.StmtContext(ctx, s.rs[qChain]), cp, base, snap, cp.ID, nil); err != nil {
		return nil, err
	}
	if id == "" {
		s.cache.put(threadID, cp.ID, cp.Channels)
	}
	return cp, nil
}

// rebuild replaces cp.Channels, the encoded writes of a delta of
// checkpoint base whose chain starts at snapshot snap, with the channels
// they give (store.Rebuild). The chain's rows are read with chain
// (qChain), up to the stored checkpoint upto (cp's, or its base's when cp
// is not stored yet).
func (s *Store) rebuild(ctx context.Context, chain *sql.Stmt, cp *runtime.Checkpoint, base, snap, upto string, chains store.Chains) error {
	return store.Rebuild(cp, base, snap, chains, func() (store.Rows, func(), error) {
		s.chainReads.Add(1)
		rs, err := chain.QueryContext(ctx, cp.ThreadID, snap, upto)
		return rs, func() { rs.Close() }, err
	})
}

// List returns the thread's checkpoints, the most recently Put first, at
// most limit of them (all when limit <= 0).
func (s *Store) List(ctx context.Context, threadID string, limit int) ([]*runtime.Checkpoint, error) {
	if limit <= 0 {
		limit = -1 // no limit in SQLite
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: s.r != s.w})
	if err != nil {
		return nil, fmt.Errorf("sqlite: list checkpoints of thread %q in %q: %w", threadID, s.path, err)
	}
	defer tx.Rollback()
	rows, err := tx.StmtContext(ctx, s.rs[qList]).QueryContext(ctx, threadID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list checkpoints of thread %q in %q: %w", threadID, s.path, err)
	}
	defer rows.Close()
	var (
		out   []*runtime.Checkpoint
		bases []string
		snaps []string
	)
	for rows.Next() {
		cp, base, snap, err := scanCheckpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list checkpoints of thread %q in %q: %w", threadID, s.path, err)
		}
		out, bases, snaps = append(out, cp), append(bases, base), append(snaps, snap)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list checkpoints of thread %q in %q: %w", threadID, s.path, err)
	}
	groups := store.Chains{}
	for i, cp := range out {
		if bases[i] == "" {
			continue
		}
		if err := s.rebuild(ctx, tx.StmtContext(ctx, s.rs[qChain]), cp, bases[i], snaps[i], cp.ID, groups); err != nil {
			return nil, fmt.Errorf("sqlite: list checkpoints of thread %q in %q: %w", threadID, s.path, err)
		}
	}
	return out, nil
}

// DeleteThread removes the thread's checkpoints, journals and lease in one
// transaction, matched by exact thread id. A run of the thread that holds
// its lease in another process then fails its next write with
// ErrLeaseLost. A run that holds it through this Store is told at once
// (LeaseOptions.Lost, with an error matching checkpoint.ErrThreadDeleted) and
// every later write of it is refused; DeleteThread does not wait for it.
func (s *Store) DeleteThread(ctx context.Context, threadID string) error {
	defer s.leases.Deleting(threadID)()
	defer s.cache.forget(threadID)
	err := s.tx(ctx, nil, func(tx *sql.Tx) error {
		for _, table := range []string{"ilmek_checkpoints", "ilmek_journals", "ilmek_leases", "ilmek_threads", "ilmek_events"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE thread_id = ?", threadID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete thread %q from %q: %w", threadID, s.path, err)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

// scanCheckpoint reads a row of cpColumns. A row stored as a delta has
// base (and snap, the snapshot its chain starts at) set, and Channels
// holding its encoded writes; rebuild makes them the channels.
func scanCheckpoint(sc scanner) (_ *runtime.Checkpoint, base, snap string, _ error) {
	var (
		cp runtime.Checkpoint
		c  store.CheckpointColumns
	)
	if err := sc.Scan(&cp.ID, &cp.ThreadID, &cp.ParentID, &cp.PlanID, &cp.Step, &c.Created, &c.Channels, &c.Next, &c.Pending, &cp.Fingerprint, &cp.Format, &cp.MigratedFrom, &base, &snap); err != nil {
		return nil, "", "", err
	}
	if err := c.Decode(&cp); err != nil {
		return nil, "", "", err
	}
	return &cp, base, snap, nil
}
