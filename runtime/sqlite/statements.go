package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// The statements a Store runs, prepared once per connection pool at Open
// (parsing SQL costs more than running these statements).
const (
	// cpColumns reads a checkpoint row (c, joined with its version v) as
	// scanCheckpoint scans it: the ids, plan and base spelled out, and the
	// id of the snapshot a delta's chain starts at (see migration 0006).
	cpColumns = "c.id, c.thread_id, c.parent_id, coalesce(c.plan_id, c.id), c.step, c.created_ns, " + cpChannels + ", c.next, c.pending," +
		" v.fingerprint, v.format, v.migrated_from, coalesce(c.base_id, c.parent_id)," +
		" coalesce((SELECT s.id FROM ilmek_checkpoints s WHERE s.thread_id = c.thread_id AND s.seq = c.snap_seq AND c.snap_seq > 0), '')"
	cpFrom = " FROM ilmek_checkpoints c CROSS JOIN ilmek_versions v ON v.vid = c.vid"

	// qInsertCheckpoint inserts a checkpoint as the thread's next row. Its
	// arguments are checkpointArgs'. The version's row must exist (else vid
	// is NULL and the insert fails: qInsertVersion, then again).
	qInsertCheckpoint = "INSERT INTO ilmek_checkpoints (thread_id, seq, id, parent_id, plan_id, step, created_ns, channels, next, pending, vid, base_id, snap_seq, depth, chain_bytes, big)" +
		" VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM ilmek_checkpoints WHERE thread_id = ?1), ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9," +
		" (SELECT vid FROM ilmek_versions WHERE fingerprint = ?10 AND format = ?11 AND migrated_from = ?12), ?13, ?14, ?15, ?16, ?17)"
	// qInsertDelta inserts a delta of checkpoint ?14 (by id) as the
	// thread's next row, with ?1 to ?13 as qInsertCheckpoint's and ?15 its
	// size: its chain's snapshot, depth and bytes follow from the base's
	// row, read in the same statement. It inserts nothing when there is
	// no such base, when the graph's version (?10 to ?12) has no row yet,
	// or when the chain would reach ?16 deltas or ?17 bytes, the least
	// the Compact rule asks of a chain before a snapshot is due
	// (fastDelta): a write then takes deltaArgs' way. Each of those makes
	// a NOT NULL column's value NULL, which OR IGNORE skips the row for
	// (as it skips a stored id, which deltaArgs' way then refuses). The
	// row is one of VALUES, read by scalar subqueries, not INSERT ...
	// SELECT: that form reads the rows to insert into a temporary table
	// first when the table has a trigger or the SELECT reads it, and
	// both hold here.
	qInsertDelta = deltaHead + deltaTail
	// qInsertDeltaFenced is qInsertDelta under the lease whose owner is
	// ?18: it inserts nothing when the lease is not that owner's (the
	// version's vid is then NULL), so a run's delta needs no fence
	// statement of its own before it. When it inserts nothing the write
	// checks the fence (checkFence), then takes deltaArgs' way.
	qInsertDeltaFenced = deltaHead + " AND EXISTS (SELECT 1 FROM ilmek_leases WHERE thread_id = ?1 AND owner = ?18)" + deltaTail
	// deltaHead and deltaTail are qInsertDelta on either side of where
	// qInsertDeltaFenced checks the lease.
	deltaHead = "INSERT OR IGNORE INTO ilmek_checkpoints (thread_id, seq, id, parent_id, plan_id, step, created_ns, channels, next, pending, vid, base_id, snap_seq, depth, chain_bytes)" +
		" VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM ilmek_checkpoints WHERE thread_id = ?1), ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9," +
		" (SELECT vid FROM ilmek_versions WHERE fingerprint = ?10 AND format = ?11 AND migrated_from = ?12"
	deltaTail = "), ?13," +
		" (SELECT CASE WHEN coalesce(b.base_id, b.parent_id) <> '' THEN b.snap_seq ELSE b.seq END FROM ilmek_checkpoints b" +
		" WHERE b.thread_id = ?1 AND b.id = ?14 AND b.depth + 1 < ?16 AND b.chain_bytes + ?15 < ?17)," +
		" (SELECT b.depth + 1 FROM ilmek_checkpoints b WHERE b.thread_id = ?1 AND b.id = ?14)," +
		" (SELECT b.chain_bytes + ?15 FROM ilmek_checkpoints b WHERE b.thread_id = ?1 AND b.id = ?14))"
	// qInsertChannels stores channels too large for their checkpoint's
	// row (bigChannels; see migration 0007).
	qInsertChannels = "INSERT INTO ilmek_channels (data) VALUES (?)"
	qInsertVersion  = "INSERT OR IGNORE INTO ilmek_versions (fingerprint, format, migrated_from) VALUES (?, ?, ?)"
	// qDeltaBase reads what a delta of a checkpoint needs of it: whether
	// it is a delta itself, its seq, its chain's snapshot's seq, depth and
	// bytes, and its size.
	qDeltaBase = "SELECT coalesce(base_id, parent_id) <> '', seq, snap_seq, depth, chain_bytes, " + channelsLength + " FROM ilmek_checkpoints WHERE thread_id = ? AND id = ?"
	qSnapBytes = "SELECT id, " + channelsLength + " FROM ilmek_checkpoints WHERE thread_id = ? AND seq = ?"
	// qChain reads a snapshot (?2, by id) and the deltas of its chain up
	// to the checkpoint ?3 (by id): the rows between them in the thread
	// whose chain starts there.
	qChain = "SELECT id, '', " + rowChannels + " FROM ilmek_checkpoints WHERE thread_id = ?1 AND id = ?2" +
		" UNION ALL SELECT id, coalesce(base_id, parent_id), " + rowChannels + " FROM ilmek_checkpoints WHERE thread_id = ?1" +
		" AND seq > (SELECT seq FROM ilmek_checkpoints WHERE thread_id = ?1 AND id = ?2)" +
		" AND seq <= (SELECT seq FROM ilmek_checkpoints WHERE thread_id = ?1 AND id = ?3)" +
		" AND snap_seq = (SELECT seq FROM ilmek_checkpoints WHERE thread_id = ?1 AND id = ?2)"
	qLatest = "SELECT " + cpColumns + cpFrom + " WHERE c.thread_id = ? ORDER BY c.seq DESC LIMIT 1"
	qByID   = "SELECT " + cpColumns + cpFrom + " WHERE c.thread_id = ? AND c.id = ?"
	qList   = "SELECT " + cpColumns + cpFrom + " WHERE c.thread_id = ? ORDER BY c.seq DESC LIMIT ?"

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
	writeQueries = []string{qInsertCheckpoint, qInsertDelta, qInsertDeltaFenced, qInsertVersion, qInsertChannels, qDeltaBase, qSnapBytes, qChain, qPutJournal, qDropJournal, qTakeLease, qRenewLease, qDropLease, qLeaseOwner,
		qCoveredEvents, qAppendEvent, qThreadMeta, qPutThreadMeta, qPutOutcome}
	readQueries = []string{qLatest, qByID, qList, qChain, qGetJournal, qLeaseHolder, qReadEvents}
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

// bigChannels is the size above which a checkpoint's channels are stored
// in ilmek_channels, not in its row (migration 0007): a row then stays
// within its page, so reading a row (and, before migration 0012, searching
// the table, then clustered by thread) never reads a snapshot it does not
// use, and the rows of one commit share pages.
const bigChannels = 512

// channelsLength is the size of the channels of a checkpoint row, read
// without reading them.
const channelsLength = "coalesce(length(channels), (SELECT length(data) FROM ilmek_channels WHERE rid = big))"

// rowChannels reads the channels of a checkpoint row, in the row or in
// ilmek_channels; cpChannels the same of row c.
const (
	rowChannels = "coalesce(channels, (SELECT data FROM ilmek_channels WHERE rid = big))"
	cpChannels  = "coalesce(c.channels, (SELECT data FROM ilmek_channels WHERE rid = c.big))"
)
