package postgres

import "strings"

// statements are the SQL texts a Store runs, with its schema filled in.
// pgx prepares each once per connection and caches it.
type statements struct {
	insert, insertDone, insertFenced string
	latest, byID, list               string
	putJournal, putJournalFenced     string
	getJournal                       string
	deleteThread                     string
	takeLease, renewLease, dropLease string
	leaseHolder                      string
	putDocument, getDocument         string
	pruneList, pruneDrop             string
}

const cpColumns = "id, thread_id, parent_id, plan_id, step, created_ns, channels, next, pending, fingerprint, format, migrated_from"

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
	const fence = "WITH f AS (SELECT 1 FROM S.ilmek_leases WHERE thread_id = $2 AND epoch = $13 FOR SHARE), "
	const values = "$1::text, $2::text, $3::text, $4::text, $5::bigint, $6::bigint, $7::bytea, $8::bytea, $9::bytea, $10::text, $11::bigint, $12::text"
	return statements{
		insert: f("INSERT INTO S.ilmek_checkpoints (" + cpColumns + ") VALUES (" + values + ")"),
		insertDone: f("WITH ins AS (INSERT INTO S.ilmek_checkpoints (" + cpColumns + ") VALUES (" + values + ") RETURNING 1), " +
			"del AS (DELETE FROM S.ilmek_journals WHERE thread_id = $2 AND task_id = ANY($13::text[])) " +
			"SELECT count(*) FROM ins"),
		insertFenced: f(fence +
			"ins AS (INSERT INTO S.ilmek_checkpoints (" + cpColumns + ") SELECT " + values + " FROM f RETURNING 1), " +
			"del AS (DELETE FROM S.ilmek_journals WHERE thread_id = $2 AND task_id = ANY($14::text[]) AND EXISTS (SELECT 1 FROM f)) " +
			"SELECT count(*) FROM ins"),
		latest: f("SELECT " + cpColumns + " FROM S.ilmek_checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1"),
		byID:   f("SELECT " + cpColumns + " FROM S.ilmek_checkpoints WHERE thread_id = $1 AND id = $2"),
		list:   f("SELECT " + cpColumns + " FROM S.ilmek_checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT $2"),

		putJournal: f("INSERT INTO S.ilmek_journals (thread_id, task_id, entries) VALUES ($1, $2, $3) " +
			"ON CONFLICT (thread_id, task_id) DO UPDATE SET entries = excluded.entries"),
		putJournalFenced: f("WITH f AS (SELECT 1 FROM S.ilmek_leases WHERE thread_id = $1 AND epoch = $4 FOR SHARE) " +
			"INSERT INTO S.ilmek_journals (thread_id, task_id, entries) SELECT $1::text, $2::text, $3::bytea FROM f " +
			"ON CONFLICT (thread_id, task_id) DO UPDATE SET entries = excluded.entries"),
		getJournal: f("SELECT entries FROM S.ilmek_journals WHERE thread_id = $1 AND task_id = $2"),

		deleteThread: f("WITH a AS (DELETE FROM S.ilmek_checkpoints WHERE thread_id = $1), " +
			"b AS (DELETE FROM S.ilmek_journals WHERE thread_id = $1) " +
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

		pruneList: f("SELECT id, parent_id, plan_id, created_ns FROM S.ilmek_checkpoints WHERE thread_id = $1 ORDER BY seq"),
		pruneDrop: f("DELETE FROM S.ilmek_checkpoints WHERE thread_id = $1 AND id = ANY($2::text[])"),
	}
}
