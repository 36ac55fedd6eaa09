// Package postgres is the shared durable Checkpointer of ilmek: threads'
// checkpoints, their tasks' journals and their run leases live in a
// PostgreSQL database (through github.com/jackc/pgx/v5), so any process on
// any machine can start, resume or finish any thread, and no two run one
// thread at once.
//
//	store, err := postgres.Open(ctx, "postgres://app@db:5432/app?sslmode=disable")
//	if err != nil { ... }
//	defer store.Close()
//	res, err := graph.Thread(store, "order-42").Invoke(ctx, input)
//
// OpenPool does the same on a *pgxpool.Pool the application already has.
//
// # Storage
//
// The tables live in one PostgreSQL schema (Schema, default "ilmek"), which
// Open creates. The schema is versioned: embedded migrations (migrations/
// NNNN_what.sql) run in order in one transaction that holds an advisory
// lock named after the schema, so processes starting at once on an empty
// schema do not race: one migrates, the others wait and find it done. The
// applied versions are rows of ilmek_migrations; a schema newer than the
// running build is refused with ErrSchemaTooNew.
//
// A checkpoint is one row of ilmek_checkpoints keyed by (thread_id, id),
// with an increasing sequence number that makes "latest" the one Put most
// recently; a journal is one row of ilmek_journals. Put inserts the
// checkpoint and deletes the journals of the finished tasks in one
// statement: a superstep commits whole or not at all.
//
// Each checkpoint row names the graph version that wrote it (fingerprint,
// format, migrated_from), and ilmek_documents keeps each version's
// document by fingerprint (runtime.DocumentStore), so a changed document
// is checked against a paused thread's by the runtime's version rule, as
// on the other backends (migration 3). Prune (runtime.Pruner) drops a
// thread's old checkpoints by the rules documented there. A superstep's
// checkpoint is usually stored as what changed since its parent
// (runtime.DeltaCheckpointer), with a full snapshot every so often
// (Compact), as on Memory and SQLite.
//
// # Threads and events
//
// The Store is a runtime.ThreadLister, runtime.ThreadRecorder and
// runtime.EventStore (migration 4). ilmek_threads holds a row per thread:
// its metadata as jsonb (runtime.WithThreadMeta; a metadata condition of
// ListThreads is one containment test, @>, on a GIN index; the key
// "owner" has a btree index in list order, migration 6, so a listing with
// Meta{"owner": o} reads only o's rows), the outcome of
// its last run with the interrupts it paused on, and its update time,
// which a trigger on ilmek_checkpoints keeps and ListThreads orders by
// (ties by thread id, bytewise). Since migration 12 the trigger rewrites
// the row only when its update time is 100 ms older than the checkpoint
// (or the thread has none yet): a run rewrites it about once every 100 ms
// and with its outcome when it ends, where every superstep's commit left
// a new row version, an entry in each of its indexes and a dead row. The outcome of a run that ends done or
// interrupted is written in the transaction of its last checkpoint, an
// error or abort under the run's lease at its end. ilmek_events is each
// run's event log (runtime.WithEventLog), appended once per superstep
// in one fenced statement, trimmed to the run's last
// runtime.MaxStoredEvents, deleted with the thread and pruned with its
// history. A row holds the consecutive events of a run that one write
// stored (migration 11; at most 64 events or 16 KiB of them): a
// superstep's five or so events cost the server one row, one entry per
// index and one WAL record, not five. Its key is its last event's Seq;
// a row of several events frames them in its data (since migration 13
// without each event's head, its type, run id, thread id and Seq, which
// the row holds: about 40% of a superstep's event bytes), so read the log
// with ReadEvents rather than SQL. A reader gets each Seq once, in order, even
// when a retried write (or AppendEvents) stored a row overlapping an
// earlier one; Prune drops a row once its last event is older than the
// oldest checkpoint it keeps, unless its run is one of a request still
// queued or running (runtime/postgres/workers reads them to tell whether
// a dead worker's run had committed).
//
// # Leases and fencing
//
// Lease gives one run at a time a thread: one statement inserts or takes
// over the thread's row of ilmek_leases (owner, epoch, expiry), and succeeds
// only when there is none or its expiry, on the server's clock, has passed.
// Each success draws a new epoch from a sequence, so epochs only grow. The
// holder renews the expiry every third of LeaseTTL (default 30 s); release
// deletes the row. A run's last write with a checkpoint or events deletes
// it in its own statement (checkpoint.Commit.Release): one statement and
// one flush less per run. A retry of that write, cut off after the server
// committed it, finds the checkpoint or the last event stored and stops
// there (the lease row, and so the fence, is gone). Until a lease expires, Lease fails at once with an error
// matching runtime.ErrThreadBusy that names the holder.
//
// Every Put and PutJournal of a thread whose lease the Store holds is
// fenced in the same statement: it locks the lease row FOR SHARE only if
// the row still carries the Store's epoch, and writes only then. A takeover
// waits for such a write in flight to commit, and every write after it
// finds another epoch, writes nothing and fails with an error matching
// ErrLeaseLost. A holder that was paused, partitioned or slow therefore
// cannot overwrite the new holder's state. A run's commit (its checkpoint,
// the journals its superstep finished, the thread record and its events)
// is one such statement, every part written only when the fence held.
// AdoptLease makes a lease row that a statement of the caller's took (a
// queue's claim) the Store's lease, fenced and renewed alike.
//
// The runtime passes the lease to every write of the run in the context and
// learns of a loss from the heartbeat (runtime.LeaseOptions.Lost), not only
// at its next write: when a renewal finds another epoch or no row, the run
// is cancelled at once and ends with an error matching ErrLeaseLost. When no
// renewal has reached the server by the lease's local deadline (when the
// last successful renewal was sent, plus the TTL minus a tenth of it), the
// runtime starts no further effect (checkpoint.LeaseDeadlinePassed).
//
// # Dropped connections
//
// A run's fenced writes (commits, journal writes, lease renewals) are
// retried with backoff, within RetryBudget (default 30 s) and the write's
// context, after an error that is safe to retry: a dropped or refused
// connection (a terminated backend, a restarted server, a proxy's idle
// timeout), a server shutting down, a serialization failure or a deadlock.
// A journal write and a renewal are upserts, so a retry writes the same
// again; a commit cut off on its way back may have committed, so before a
// retry the Store checks for the checkpoint's row and, when it is there,
// does not write again. Each retry is a WARN line through slog and goes to
// OnRetry as a checkpoint.Retry (the otel module's Observer.Retry counts
// it). TestRetryAfterTerminatedConnection ends the Store's
// connections with pg_terminate_backend between a step's effect and its
// journal write and before a commit: the run finishes and the effect runs
// once; TestRetryAcrossRestart does the same across a server restart
// (ILMEK_PGTEST_RESTART=1, in CI's serial restart step).
//
// # Tests
//
// The package's tests run against the server named by ILMEK_POSTGRES_DSN,
// each in schemas of its own that it drops afterwards; without it they skip,
// and with CI=true they fail instead.
package postgres
