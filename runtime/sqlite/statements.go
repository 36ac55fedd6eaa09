package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// The statements a Store runs, prepared once per connection pool at Open
// (parsing SQL costs more than running these statements).
const (
	cpColumns = "id, thread_id, parent_id, plan_id, step, created_ns, channels, next, pending, fingerprint, format, migrated_from, base_id, snap_id"

	qInsertCheckpoint = "INSERT INTO ilmek_checkpoints (" + cpColumns + ", depth, chain_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	qDeltaBase        = "SELECT base_id, snap_id, depth, chain_bytes, length(channels) FROM ilmek_checkpoints WHERE thread_id = ? AND id = ?"
	qSnapBytes        = "SELECT length(channels) FROM ilmek_checkpoints WHERE thread_id = ? AND id = ?"
	// qChain reads a snapshot and the deltas whose chains start at it (two
	// indexed lookups: an OR of the two would scan the thread).
	qChain = "SELECT id, base_id, channels FROM ilmek_checkpoints WHERE thread_id = ?1 AND id = ?2" +
		" UNION ALL SELECT id, base_id, channels FROM ilmek_checkpoints WHERE thread_id = ?1 AND snap_id = ?2"
	qLatest = "SELECT " + cpColumns + " FROM ilmek_checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT 1"
	qByID   = "SELECT " + cpColumns + " FROM ilmek_checkpoints WHERE thread_id = ? AND id = ?"
	qList   = "SELECT " + cpColumns + " FROM ilmek_checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT ?"

	qPutJournal  = "INSERT OR REPLACE INTO ilmek_journals (thread_id, task_id, entries) VALUES (?, ?, ?)"
	qGetJournal  = "SELECT entries FROM ilmek_journals WHERE thread_id = ? AND task_id = ?"
	qDropJournal = "DELETE FROM ilmek_journals WHERE thread_id = ? AND task_id = ?"

	qTakeLease = `INSERT INTO ilmek_leases (thread_id, owner, holder, expires_ns) VALUES (?, ?, ?, ?)
		ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner, holder = excluded.holder, expires_ns = excluded.expires_ns
		WHERE ilmek_leases.expires_ns <= ?`
	qRenewLease  = "UPDATE ilmek_leases SET expires_ns = ? WHERE thread_id = ? AND owner = ?"
	qDropLease   = "DELETE FROM ilmek_leases WHERE thread_id = ? AND owner = ?"
	qLeaseOwner  = "SELECT owner FROM ilmek_leases WHERE thread_id = ?"
	qLeaseHolder = "SELECT holder, expires_ns FROM ilmek_leases WHERE thread_id = ?"
)

var (
	writeQueries = []string{qInsertCheckpoint, qDeltaBase, qSnapBytes, qChain, qPutJournal, qDropJournal, qTakeLease, qRenewLease, qDropLease, qLeaseOwner}
	readQueries  = []string{qLatest, qByID, qList, qChain, qGetJournal, qLeaseHolder}
)

// prepared is a set of statements prepared on one pool.
type prepared map[string]*sql.Stmt

func prepare(db *sql.DB, queries []string) (prepared, error) {
	p := prepared{}
	for _, q := range queries {
		st, err := db.PrepareContext(context.Background(), q)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		p[q] = st
	}
	return p, nil
}

func (p prepared) close() {
	for _, st := range p {
		st.Close()
	}
}

// in returns the statement q bound to the transaction tx, reusing its
// preparation on the writer connection.
func (p prepared) in(ctx context.Context, tx *sql.Tx, q string) *sql.Stmt {
	return tx.StmtContext(ctx, p[q])
}
