// Package sqlite is the embedded durable Checkpointer of ilmek: a thread's
// checkpoints, its tasks' journals and its run lease live in one SQLite file,
// through the pure-Go driver modernc.org/sqlite (no cgo).
//
//	store, err := sqlite.Open("app.db")
//	if err != nil { ... }
//	defer store.Close()
//	res, err := graph.Thread(store, "order-42").Invoke(ctx, input)
//
// # Storage
//
// Open creates the schema when the file is new (tables ilmek_checkpoints,
// ilmek_journals and ilmek_leases; the table ilmek_meta records the schema
// version, so the file can also hold an application's own tables) and
// switches the file to WAL mode. A checkpoint is one row keyed
// by (thread_id, id) with its parent id, plan id, superstep, creation time,
// and its channels, next tasks and pending interrupts as JSON; rows also get
// an increasing sequence number, so the latest checkpoint of a thread is the
// one Put most recently, its last by (thread_id, seq). A journal
// is one row (thread_id, task_id) holding the task's entries as JSON.
//
// Put inserts the checkpoint and deletes the journals of the finished tasks
// in one transaction: a superstep commits whole or not at all, whether the
// process stops, crashes or loses power.
//
// The Store is a runtime.DeltaCheckpointer (schema version 3): a
// superstep's checkpoint is usually a row whose channels column holds only
// what changed since its parent (base_id; for an append channel the new
// elements), and every Compact.Every deltas or Compact.Bytes delta bytes
// (runtime.DefaultCompaction unless the Compact option says otherwise) a
// row holds the full channels again (a delta records the snapshot its
// chain starts at, so a read fetches the chain with one query, in one read
// transaction). A delta that no limit can make due is one statement, whose
// insert reads its base's row; a write near a limit reads the base and the
// chain's snapshot first, and decides. Opening a file of schema version 1 or 2 migrates
// it in place, in one transaction: its checkpoints stay full snapshots and
// new ones are deltas of them. A file of a newer version is refused
// untouched (ErrSchema).
//
// Version 3 also finds threads and keeps runs' events: the Store is a
// runtime.ThreadLister, runtime.ThreadRecorder and runtime.EventStore.
// ilmek_threads holds a row per thread: its metadata (a JSON object of
// strings, runtime.WithThreadMeta), the outcome of its last run (status,
// run id, end time, error text) with the interrupts it paused on, and its
// update time, which a trigger on ilmek_checkpoints keeps; ListThreads
// reads it newest first, ties by thread id. The outcome of a run that ends
// done or interrupted is written in the transaction of its last
// checkpoint; an error or abort, which writes no checkpoint, in one of its
// own under the run's lease. ilmek_events is each run's event log
// (runtime.WithEventLog): a transaction per superstep appends its
// events, the run keeps its last runtime.MaxStoredEvents, DeleteThread
// deletes them and Prune drops those older than the oldest checkpoint it
// keeps. Since version 8 a row holds the consecutive events of a run that
// one write stored, framed in its data, while the row stays within 950
// bytes, what SQLite keeps of a row on its page; since version 10 a frame
// leaves out an event's head (its type, run id, thread id and Seq, which
// the row holds), so a superstep's five or so events take one row: read
// the log with ReadEvents, not SQL. Migrating a file of version 1 or 2 gives each stored thread its
// row from its latest checkpoint: interrupted (with its interrupts) when
// it has pending ones, done when nothing is planned, no outcome otherwise.
//
// Version 9 keeps a thread's row out of most commits: the trigger
// rewrites it for a checkpoint only when its update time is 100 ms older
// than the checkpoint (or the thread has no row yet), so a run rewrites it
// about once every 100 ms, and its outcome when it ends. The row and its
// index by update time were two of the four pages a superstep's commit
// wrote (BENCHMARKS.md, "A thread's row out of the commit").
//
// Version 4 indexes the metadata key "owner": a listing with
// Meta{"owner": o}, as the server's owner-only access asks, reads only
// o's rows, newest first (BenchmarkListOtherOwner: an owner with no
// threads among 10,000 of another is listed as fast as on an empty store;
// without the index the listing read them all). Other metadata keys are
// tested on the rows the rest of the query selects.
//
// Version 6 slims the checkpoint rows and what a commit writes (migration
// 0006; version 5 holds schedules). ilmek_checkpoints is clustered by
// (thread_id, seq), seq counting a thread's checkpoints, so the latest is
// the thread's last row and a chain of deltas a run of rows; one index,
// (thread_id, id), finds a checkpoint by id and keeps ids unique. A commit
// writes those two b-trees (and the thread's row), where version 5 wrote
// the table, its AUTOINCREMENT counter and three indexes: five WAL frames
// per superstep instead of eight. What rows repeated is stored once or
// implied: the graph version (fingerprint, format, migrated from) is a row
// of ilmek_versions, a NULL plan_id is the row's id, a NULL base_id its
// parent, and a delta names its chain's snapshot by seq (snap_seq). A
// 3,000-turn chat thread's file went from 3.89 to 2.64 MiB (BENCHMARKS.md).
// Opening an older file migrates its rows in place, keeping their order.
//
// Version 11 keys that index (id, thread_id) instead. An id the executor
// makes begins with its time, so a commit's entry goes at the index's end
// whatever its thread, and the commits of many threads that share a
// transaction (the group commit) share that page, where each wrote a
// page of its own thread's: sixteen threads at once ran 4 to 26% faster
// in the runs BENCHMARKS.md records. Uniqueness and lookups are the same.
//
// Version 12 keeps the checkpoints in commit order: rows go at the
// table's end (rid counts them), and a unique index on (thread_id, seq)
// finds a thread's rows in order and keeps its seq numbers unique, as the
// primary key did. A group commit's rows then share the table's last
// page, and each thread writes only its small index entry among its own,
// where it wrote a whole row into a page of its thread's rows: sixteen
// threads at once ran about a third faster (BENCHMARKS.md, "The
// checkpoints in commit order"). No statement scans the table
// (TestCheckpointStatementsUseIndexes). Opening a version 11 file copies
// its rows thread by thread.
//
// Version 7 stores channels of more than 512 bytes apart, in
// ilmek_channels (a rowid table), and the checkpoint row names them
// (big). A search of the checkpoints table, then clustered by thread,
// compared keys with the rows it passed, and SQLite reads the whole of a
// row that overflows its page to compare it: in version 6 every lookup in a long chat
// thread read its 360 KB snapshots from the file, and that grew with the
// conversation. A delta, usually a few hundred bytes, stays in its row.
// Deleting a checkpoint, or Prune storing a delta again in full, deletes
// the channels it named (triggers). Opening a version 6 file moves its
// large channels in the migration's transaction.
//
// # Reading a long thread
//
// A delta's full channels are its chain's snapshot with every delta since
// applied, and a chain grows until its deltas weigh as much as the
// snapshot (up to 1,000 rows): reading a long chat thread's latest
// checkpoint from the file reads and applies that chain. So a Store keeps,
// for the threads it wrote or read most recently, the full channels of
// one checkpoint and the deltas it committed after it (at most 32 before
// it folds them in), within CacheBytes (DefaultCacheBytes, 64 MiB; the
// threads used least recently go first). A read still reads the
// checkpoint's row, so it sees what other processes wrote and what was
// deleted; it takes the channels from the cache when they are there or
// are its base's plus its own delta, and reads the chain otherwise. The
// cache is keyed by checkpoint id, whose channels never change (a
// checkpoint id is unique within its thread; compaction writes new rows,
// and Prune, when it stores a delta again in full, stores the same
// channels), so another process's writes cannot make an entry wrong. A chat thread of 3,000
// turns no longer reads its chain at each turn (with the runtime's state
// carried between runs, a turn costs 2.6 times less; BENCHMARKS.md,
// "Issue 35, later the same day").
//
// A run that starts from the state its graph holds (runtime's state
// cache) reads the latest checkpoint with GetLatest
// (checkpoint.LatestReader): when it is still the checkpoint that state
// is of, the Store reads its row only, and builds no channels.
//
// # Concurrency model
//
// A Store is safe for concurrent use by many goroutines, and several
// processes may open the same file. Within a process every write goes
// through one connection (transactions begin IMMEDIATE, so a write never
// fails half-way on a lock upgrade); reads use a small pool of read-only
// connections, which WAL lets run while a write is in progress. Between
// processes SQLite's file locks serialize the writes; a writer waits up to
// the busy timeout (BusyTimeout, default 5 s) for another process's write
// to finish. The file must be on a local disk: WAL does not work over a
// network file system.
//
// The writes of runs (their leases' Commit and PutJournal) are committed
// in groups: those that arrive while a transaction is being written and
// flushed wait, and then share the next transaction and its one flush.
// The write that starts a transaction first yields to the goroutines
// ready to run (runtime.Gosched), so that the runs the last transaction
// released, which come back at about the same time, share one flush
// rather than the first of them taking one alone
// (TestGroupLeaderWaitsForReadyWrites). Every caller gets its own
// result: when a write's fence or statements
// fail, or the shared commit does, the transaction is rolled back whole
// and each write is tried again alone. A run's write whose context ends
// before it starts fails with the context's error; once started it is
// not cancelled (an interrupted statement would roll back the whole
// transaction), and a wait for another process's write lock is bounded
// by the busy timeout (TestGroupCommit;
// BenchmarkChain10Parallel/sqlite-16-threads measures 16 threads
// at once).
//
// # Leases
//
// Lease gives one run at a time a thread, across goroutines and processes:
// it inserts or takes over a row of ilmek_leases (thread_id, owner token,
// holder, expires_at) in one statement, which succeeds only when there is no
// row or its expiry has passed. The owner token is the lease's fencing token
// (runtime.Lease.Fence): random, new at every take. While the lease is
// held, a heartbeat goroutine pushes expires_at forward every third of the
// lease's time to live (LeaseTTL, default 30 s) and reports each renewal
// (runtime.LeaseOptions.Renewed); release stops the heartbeat and deletes
// the row. A run's last write deletes it in its own transaction
// (checkpoint.Commit.Release): a run costs one transaction, and one flush,
// less (a chat turn 15% less; BENCHMARKS.md). A process that dies holding a lease stops renewing it, so another
// process can take the thread over once the TTL has passed. Until then,
// Lease fails at once with an error for which errors.Is(err,
// runtime.ErrThreadBusy) holds, naming the holder.
//
// Writes are fenced: a run writes through its lease (checkpoint.Lease's
// Commit and PutJournal), and each such write checks, in its own
// transaction, that the lease row still carries its token. A superstep's
// delta, the most common write, carries the check in its insert
// (qInsertDeltaFenced): it inserts nothing under a lease taken over, and
// only then is the lease read by a statement of its own, to say which
// (TestFencedDelta). A process that stalled past its expiry and was
// taken over therefore fails with ErrLeaseLost instead of overwriting the
// new owner's checkpoints. Expiry compares wall-clock times of the
// processes sharing the file, which share a machine.
//
// The stalled process does not wait for its next write to find out. Its
// lease has a local deadline (runtime.Lease.Deadline): the monotonic time
// at which the last successful renewal was sent, plus the TTL, minus a
// tenth of it. Past the deadline runtime.Step starts no effect and the run
// stops with a lost lease (checkpoint.LeaseDeadlinePassed), so a process frozen (SIGSTOP, a long
// GC pause, a suspended VM) past its lease starts nothing when it wakes;
// and when its heartbeat finds the row gone or carrying another token, the
// run is cancelled at once (runtime.LeaseOptions.Lost) and ends with an
// error matching ErrLeaseLost. What remains: an effect that was already
// running when the process froze completes; its journal write is refused,
// and the new holder runs the effect again.
//
// DeleteThread removes the thread's rows by exact thread id in one
// transaction. A run holding the thread through the same Store is told at
// once and ends with an error matching runtime.ErrThreadDeleted; its later
// writes are refused. A run in another process fails its next write (its
// lease row is gone) and is stopped by its heartbeat. Nothing of the thread
// reappears.
//
// # Integrity
//
// Check runs SQLite's quick_check over the file and reports a damaged
// file as a *DamageError (matching ErrDamaged) that lists what SQLite
// found: malformed or overwritten pages, broken free lists, rows missing
// from an index, malformed records. It does not detect bytes of a row
// changed into other well-formed bytes (SQLite keeps no checksums of
// content), a write the disk acknowledged and dropped that left the file
// consistent, or damage in the write-ahead log before it is copied into
// the file; a checkpoint whose stored JSON or delta chain does not decode
// is reported by the read that meets it. A running store does not check
// itself: run Check from an operator's tool or on a schedule, and restore
// a damaged file from a backup (TestCheckFindsDamage overwrites a page of
// a file and expects Check to name it).
package sqlite
