package postgres

import "strings"

// statements are the SQL texts a Store runs, with its schema filled in.
// pgx prepares each once per connection and caches it.
type statements struct {
	insert, insertDone, insertFenced string
	latest, byID, list               string
	stored, eventStored              string
	eventWritten                     string
	batchWritten                     string
	putJournal, putJournalFenced     string
	getJournal                       string
	deleteThread                     string
	takeLease, renewLease, dropLease string
	leaseHolder                      string
	putDocument, getDocument         string
	pruneList, pruneDrop             string
	pruneRebase, pruneRenumber       string
	insertDelta, deltaBase           string
	deltaFast, deltaFastFenced       string
	latestChain, byIDChain           string
	snapBytes, chain                 string
	fenceShare, dropJournals         string
	putOutcome, putThreadMeta        string
	listThreads                      string
	coveredEvents, appendEvent       string
	trimEvents                       string
	readEvents, pruneEvents          string

	// fill fills the schema into a statement written with "S." before
	// each table (commitSQL's).
	fill func(string) string
}

const cpColumns = "id, thread_id, parent_id, plan_id, step, created_ns, channels, next, pending, fingerprint, format, migrated_from"

// readColumns are cpColumns and what says whether a row is a delta.
const readColumns = cpColumns + ", base_id, snap_id"

// newStatements writes the statements for the schema s (already quoted).
//
// A fenced write runs as one statement: its first part takes a FOR SHARE
// lock on the thread's lease row if, and only if, the row still carries the
// writer's epoch, and the write happens only when it did. A takeover
// updates that row, so it waits for a fenced write in flight to commit, and
// every fenced write after it finds another epoch and writes nothing.
func newStatements(s string) statements {
	r := strings.NewReplacer("S.", s+".", "'S.", "'"+s+".")
	f := func(q string) string { return r.Replace(q) }
	const values = cpValues
	return statements{
		fill:   f,
		insert: f("INSERT INTO S.ilmek_checkpoints (" + cpColumns + ") VALUES (" + values + ")"),
		insertDone: f("WITH ins AS (INSERT INTO S.ilmek_checkpoints (" + cpColumns + ") VALUES (" + values + ") RETURNING 1), " +
			"del AS (DELETE FROM S.ilmek_journals WHERE thread_id = $2 AND task_id = ANY($13::text[])) " +
			"SELECT count(*) FROM ins"),
		insertFenced: f(insertFencedCTEs + " SELECT count(*) FROM ins"),
		latest:       f("SELECT " + readColumns + " FROM S.ilmek_checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1"),
		byID:         f("SELECT " + readColumns + " FROM S.ilmek_checkpoints WHERE thread_id = $1 AND id = $2"),
		stored:       f("SELECT EXISTS (SELECT 1 FROM S.ilmek_checkpoints WHERE thread_id = $1 AND id = $2)"),
		eventStored:  f("SELECT EXISTS (SELECT 1 FROM S.ilmek_events WHERE run_id = $1 AND seq >= $2 AND coalesce(first_seq, seq) <= $2)"),
		// Fails with a division by zero unless the event is stored: in a
		// batch after a final write, it stops what follows when the
		// write's fence did not hold (final.go).
		eventWritten: f("SELECT 1 / (EXISTS (SELECT 1 FROM S.ilmek_events WHERE run_id = $1 AND seq >= $2 AND coalesce(first_seq, seq) <= $2))::int"),
		// Fails with a division by zero unless the batch's checkpoints
		// are all written (batch.go).
		batchWritten: f("SELECT 1 / ((SELECT count(*) FROM S.ilmek_checkpoints WHERE thread_id = $1 AND id = ANY($2::text[])) = $3::bigint)::int"),
		list:         f("SELECT " + readColumns + " FROM S.ilmek_checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT $2"),

		insertDelta: f("INSERT INTO S.ilmek_checkpoints (" + cpColumns + ", base_id, snap_id, depth, chain_bytes) VALUES (" + values +
			", $13::text, $14::text, $15::integer, $16::bigint)"),
		latestChain:     f(withChain("SELECT thread_id, id, snap_id FROM S.ilmek_checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1")),
		byIDChain:       f(withChain("SELECT thread_id, id, snap_id FROM S.ilmek_checkpoints WHERE thread_id = $1 AND id = $2")),
		deltaFast:       f(deltaFast("WITH f AS (SELECT 1), ")),
		deltaFastFenced: f(deltaFast(deltaFence)),
		deltaBase:       f("SELECT base_id, snap_id, depth, chain_bytes FROM S.ilmek_checkpoints WHERE thread_id = $1 AND id = $2"),
		snapBytes:       f("SELECT coalesce(length(channels), 0) FROM S.ilmek_checkpoints WHERE thread_id = $1 AND id = $2"),
		chain: f("SELECT id, base_id, channels FROM S.ilmek_checkpoints WHERE thread_id = $1 AND id = $2" +
			" UNION ALL SELECT id, base_id, channels FROM S.ilmek_checkpoints WHERE thread_id = $1 AND snap_id = $2 AND snap_id <> ''"),
		fenceShare:   f("SELECT 1 FROM S.ilmek_leases WHERE thread_id = $1 AND epoch = $2 FOR SHARE"),
		dropJournals: f("DELETE FROM S.ilmek_journals WHERE thread_id = $1 AND task_id = ANY($2::text[])"),

		putJournal: f("INSERT INTO S.ilmek_journals (thread_id, task_id, entries) VALUES ($1, $2, $3) " +
			"ON CONFLICT (thread_id, task_id) DO UPDATE SET entries = excluded.entries"),
		putJournalFenced: f("WITH f AS (SELECT 1 FROM S.ilmek_leases WHERE thread_id = $1 AND epoch = $4 FOR SHARE) " +
			"INSERT INTO S.ilmek_journals (thread_id, task_id, entries) SELECT $1::text, $2::text, $3::bytea FROM f " +
			"ON CONFLICT (thread_id, task_id) DO UPDATE SET entries = excluded.entries"),
		getJournal: f("SELECT entries FROM S.ilmek_journals WHERE thread_id = $1 AND task_id = $2"),

		deleteThread: f("WITH a AS (DELETE FROM S.ilmek_checkpoints WHERE thread_id = $1), " +
			"b AS (DELETE FROM S.ilmek_journals WHERE thread_id = $1), " +
			"c AS (DELETE FROM S.ilmek_threads WHERE thread_id = $1), " +
			"d AS (DELETE FROM S.ilmek_events WHERE thread_id = $1) " +
			"DELETE FROM S.ilmek_leases WHERE thread_id = $1"),

		takeLease: f("INSERT INTO S.ilmek_leases (thread_id, epoch, owner, expires) " +
			"VALUES ($1, nextval('S.ilmek_lease_epoch'), $2, clock_timestamp() + $3::bigint * interval '1 microsecond') " +
			"ON CONFLICT (thread_id) DO UPDATE SET epoch = excluded.epoch, owner = excluded.owner, expires = excluded.expires " +
			"WHERE S.ilmek_leases.expires <= clock_timestamp() RETURNING epoch"),
		renewLease: f("UPDATE S.ilmek_leases SET expires = clock_timestamp() + $3::bigint * interval '1 microsecond' " +
			"WHERE thread_id = $1 AND epoch = $2"),
		dropLease:   f("DELETE FROM S.ilmek_leases WHERE thread_id = $1 AND epoch = $2"),
		leaseHolder: f("SELECT owner, epoch, expires FROM S.ilmek_leases WHERE thread_id = $1"),

		putDocument: f("INSERT INTO S.ilmek_documents (fingerprint, doc) VALUES ($1, $2) ON CONFLICT (fingerprint) DO NOTHING"),
		getDocument: f("SELECT doc FROM S.ilmek_documents WHERE fingerprint = $1"),

		pruneList:     f("SELECT id, parent_id, plan_id, created_ns, base_id, snap_id, coalesce(length(channels), 0) FROM S.ilmek_checkpoints WHERE thread_id = $1 ORDER BY seq"),
		pruneRebase:   f("UPDATE S.ilmek_checkpoints SET channels = $3, base_id = '', snap_id = '', depth = 0, chain_bytes = 0 WHERE thread_id = $1 AND id = $2"),
		pruneRenumber: f("UPDATE S.ilmek_checkpoints SET snap_id = $3, depth = $4, chain_bytes = $5 WHERE thread_id = $1 AND id = $2"),
		pruneDrop:     f("DELETE FROM S.ilmek_checkpoints WHERE thread_id = $1 AND id = ANY($2::text[])"),
		// The events of a run of a request still queued or running stay:
		// a worker that claims the request again reads whether its
		// earlier runs wrote anything from them (runtime/postgres/workers).
		pruneEvents: f("DELETE FROM S.ilmek_events e WHERE thread_id = $1 AND time_ns < " +
			"(SELECT min(created_ns) FROM S.ilmek_checkpoints WHERE thread_id = $1) AND NOT EXISTS (SELECT 1 FROM S.ilmek_requests r " +
			"WHERE r.thread_id = $1 AND r.state IN ('queued', 'running') AND e.run_id = ANY (r.run_ids))"),

		putOutcome: f("INSERT INTO S.ilmek_threads (thread_id, status, run_id, ended_ns, error, pending, updated_ns) VALUES ($1, $2, $3, $4, $5, $6, $7) " +
			"ON CONFLICT (thread_id) DO UPDATE SET status = excluded.status, run_id = excluded.run_id, ended_ns = excluded.ended_ns, " +
			"error = excluded.error, pending = excluded.pending, updated_ns = greatest(S.ilmek_threads.updated_ns, excluded.updated_ns)"),
		// Metadata merges: $2 holds the pairs to set, $3 the keys to remove.
		putThreadMeta: f("INSERT INTO S.ilmek_threads (thread_id, meta, updated_ns) VALUES ($1, $2::jsonb - $3::text[], $4) " +
			"ON CONFLICT (thread_id) DO UPDATE SET meta = (S.ilmek_threads.meta || $2::jsonb) - $3::text[], " +
			"updated_ns = greatest(S.ilmek_threads.updated_ns, excluded.updated_ns)"),
		listThreads: f("SELECT thread_id, meta, status, run_id, ended_ns, error, pending, updated_ns FROM S.ilmek_threads WHERE true"),
		// AppendEvents stores each row ($1 run, $2 key, $3 first Seq)
		// after deleting the stored rows it holds all of, and only when no
		// stored row holds all of it: rows never nest, so rows in key
		// order hold their events in Seq order.
		coveredEvents: f("DELETE FROM S.ilmek_events WHERE run_id = $1 AND seq >= $3 AND seq < $2 AND coalesce(first_seq, seq) >= $3"),
		appendEvent: f("INSERT INTO S.ilmek_events (run_id, seq, first_seq, thread_id, time_ns, kind, data) SELECT $1, $2, $3, $4, $5, $6, $7 " +
			"WHERE NOT EXISTS (SELECT 1 FROM S.ilmek_events WHERE run_id = $1 AND seq > $2 AND coalesce(first_seq, seq) <= $3) " +
			"ON CONFLICT (run_id, seq) DO UPDATE SET " + eventUpdate),
		trimEvents: f("DELETE FROM S.ilmek_events WHERE run_id = $1 AND seq <= $2"),
		// The rows holding events after $2 (a row's key is its last
		// Seq, internal/store/event_rows.go), and the run's newest Seq for its cap.
		readEvents: f("SELECT seq, coalesce(first_seq, seq), thread_id, time_ns, kind, data, " +
			"(SELECT max(seq) FROM S.ilmek_events WHERE run_id = $1) FROM S.ilmek_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"),
	}
}

// cpValues are a checkpoint's columns as parameters $1-$12.
const cpValues = "$1::text, $2::text, $3::text, $4::text, $5::bigint, $6::bigint, $7::bytea, $8::bytea, $9::bytea, $10::text, $11::bigint, $12::text"

// insertFencedCTEs are the CTEs of a fenced full checkpoint write: f holds
// the lease row FOR SHARE when it carries epoch $13, ins inserts the
// checkpoint ($1-$12) only then, del drops the journals of the tasks in
// $14.
const insertFencedCTEs = "WITH f AS (SELECT 1 FROM S.ilmek_leases WHERE thread_id = $2 AND epoch = $13 FOR SHARE), " +
	"ins AS (INSERT INTO S.ilmek_checkpoints (" + cpColumns + ") SELECT " + cpValues + " FROM f RETURNING 1), " +
	"del AS (DELETE FROM S.ilmek_journals WHERE thread_id = $2 AND task_id = ANY($14::text[]) AND EXISTS (SELECT 1 FROM f))"

// deltaFence is the fence CTE of deltaFast's fenced form (epoch $19).
const deltaFence = "WITH f AS (SELECT 1 FROM S.ilmek_leases WHERE thread_id = $2 AND epoch = $19 FOR SHARE), "

// deltaFast is PutDelta's common case in one statement, after the fence
// CTE f: when the base exists and the chain stays under the compaction
// limits ($14 deltas; $16 bytes, or when $16 is 0 the chain's snapshot
// size but at least $17), it inserts the delta row and drops the journals
// of the tasks in $18. It returns whether the fence held, whether the
// base exists, and whether it inserted: a base found but nothing inserted
// means the chain must be compacted, which PutDelta then does in a
// transaction. $1-$12 are the checkpoint's columns, $13 the base, $15 the
// delta's size. The snapshot's size is read only when the chain reaches
// $17: below it the limit is $17 whatever the snapshot's size, and a
// chain of small deltas spares a lookup of its snapshot's row a commit.
func deltaFast(fence string) string {
	return deltaFastCTEs(fence) + " SELECT (SELECT count(*) FROM f), (SELECT count(*) FROM b), (SELECT count(*) FROM ins)"
}

// deltaFastCTEs are deltaFast's CTEs, without its final SELECT.
func deltaFastCTEs(fence string) string {
	return fence +
		"b AS (SELECT c.base_id, CASE WHEN c.base_id = '' THEN c.id ELSE c.snap_id END AS snap, c.depth, c.chain_bytes" +
		" FROM S.ilmek_checkpoints c WHERE c.thread_id = $2 AND c.id = $13), " +
		"g AS (SELECT b.snap, b.depth, b.chain_bytes FROM b WHERE b.depth + 1 < $14::integer AND b.chain_bytes + $15::bigint < " +
		"CASE WHEN $16::bigint > 0 THEN $16::bigint WHEN b.chain_bytes + $15::bigint < $17::bigint THEN $17::bigint ELSE greatest($17::bigint, CASE WHEN b.base_id = '' THEN 0 ELSE " +
		"(SELECT coalesce(length(s.channels), 0) FROM S.ilmek_checkpoints s WHERE s.thread_id = $2 AND s.id = b.snap) END) END), " +
		"ins AS (INSERT INTO S.ilmek_checkpoints (" + cpColumns + ", base_id, snap_id, depth, chain_bytes) SELECT " +
		"$1::text, $2::text, $3::text, $4::text, $5::bigint, $6::bigint, $7::bytea, $8::bytea, $9::bytea, $10::text, $11::bigint, $12::text, " +
		"$13::text, g.snap, g.depth + 1, g.chain_bytes + $15::bigint FROM g, f RETURNING 1), " +
		"del AS (DELETE FROM S.ilmek_journals WHERE thread_id = $2 AND task_id = ANY($18::text[]) AND EXISTS (SELECT 1 FROM ins))"
}

// withChain reads, in one statement (so one snapshot of the database), the
// checkpoint row that pick selects, marked true, and when it is a delta
// every row of its chain's snapshot, marked false.
func withChain(pick string) string {
	cols := "c." + strings.ReplaceAll(readColumns, ", ", ", c.")
	// A chain row needs only its id, base and channels.
	const chainCols = "c.id, c.thread_id, '', '', 0::bigint, 0::bigint, c.channels, NULL::bytea, NULL::bytea, '', 0::bigint, '', c.base_id, c.snap_id"
	return "WITH r AS (" + pick + ") " +
		"SELECT " + cols + ", true FROM S.ilmek_checkpoints c WHERE (c.thread_id, c.id) = (SELECT thread_id, id FROM r) " +
		"UNION ALL SELECT " + chainCols + ", false FROM S.ilmek_checkpoints c, r WHERE r.snap_id <> '' AND c.thread_id = r.thread_id AND c.id = r.snap_id " +
		"UNION ALL SELECT " + chainCols + ", false FROM S.ilmek_checkpoints c, r WHERE r.snap_id <> '' AND c.thread_id = r.thread_id AND c.snap_id = r.snap_id AND c.snap_id <> ''"
}

// insertEvents is the statement (or data-modifying CTE) that inserts the
// rows of events (store.PackEvents) when cond holds; arrays is the SQL of
// the seven arrays of their columns (run_id, seq, first_seq, thread_id,
// time_ns, kind, data). A row whose key is stored already is replaced
// only by one that holds at least its events. It looks up no other row:
// a run's writes never store a row that holds a stored row's later events
// without its earlier ones, other than those the run's cap drops (a write
// retried after a cut connection hid that it committed packs its events
// the same way, or from the same first event with more), so rows in key
// order hold their events in Seq order. AppendEvents, whose callers may
// store any events again, keeps that with coveredEvents and appendEvent.
func insertEvents(arrays, cond string) string {
	return "INSERT INTO S.ilmek_events (run_id, seq, first_seq, thread_id, time_ns, kind, data) SELECT * FROM unnest(" + arrays + ") WHERE " + cond +
		" ON CONFLICT (run_id, seq) DO UPDATE SET " + eventUpdate
}

// insertEventRow is insertEvents for one row, whose columns' values row
// spells (seven scalars in the same order).
func insertEventRow(row, cond string) string {
	return "INSERT INTO S.ilmek_events (run_id, seq, first_seq, thread_id, time_ns, kind, data) SELECT " + row + " WHERE " + cond +
		" ON CONFLICT (run_id, seq) DO UPDATE SET " + eventUpdate
}

// eventUpdate is an events insert's ON CONFLICT update: a row replaces a
// stored row of its key only when it holds at least its events.
const eventUpdate = "first_seq = excluded.first_seq, thread_id = excluded.thread_id, time_ns = excluded.time_ns, " +
	"kind = excluded.kind, data = excluded.data WHERE excluded.first_seq <= coalesce(S.ilmek_events.first_seq, S.ilmek_events.seq)"
