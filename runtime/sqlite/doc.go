// Package sqlite is the embedded durable Checkpointer of ilmek: a thread's
// checkpoints, its tasks' journals and its run lease live in one SQLite file,
// through the pure-Go driver modernc.org/sqlite (no cgo).
//
//	store, err := sqlite.Open("app.db")
//	if err != nil { ... }
//	defer store.Close()
//	res, err := graph.Invoke(ctx, input, runtime.Thread("order-42"), runtime.WithCheckpointer(store))
//
// # Storage
//
// Open creates the schema when the file is new (tables ilmek_checkpoints,
// ilmek_journals and ilmek_leases; PRAGMA user_version records the schema
// version) and switches the file to WAL mode. A checkpoint is one row keyed
// by (thread_id, id) with its parent id, plan id, superstep, creation time,
// and its channels, next tasks and pending interrupts as JSON; rows also get
// an increasing sequence number, so the latest checkpoint of a thread is the
// one Put most recently, found through the index (thread_id, seq). A journal
// is one row (thread_id, task_id) holding the task's entries as JSON.
//
// Put inserts the checkpoint and deletes the journals of the finished tasks
// in one transaction: a superstep commits whole or not at all, whether the
// process stops, crashes or loses power.
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
// # Leases
//
// Lease gives one run at a time a thread, across goroutines and processes:
// it inserts or takes over a row of ilmek_leases (thread_id, owner token,
// holder, expires_at) in one statement, which succeeds only when there is no
// row or its expiry has passed. While the lease is held, a heartbeat
// goroutine pushes expires_at forward every third of the lease's time to
// live (LeaseTTL, default 30 s); release stops the heartbeat and deletes the
// row. A process that dies holding a lease stops renewing it, so another
// process can take the thread over once the TTL has passed. Until then,
// Lease fails at once with an error for which errors.Is(err,
// runtime.ErrThreadBusy) holds, naming the holder.
//
// Writes are fenced: while a Store holds a thread's lease, its Put and
// PutJournal for that thread check, in the same transaction, that the lease
// row still carries its token. A process that stalled past its expiry and
// was taken over therefore fails with ErrLeaseLost instead of overwriting
// the new owner's checkpoints. Expiry compares wall-clock times of the
// processes sharing the file, which share a machine.
//
// The runtime takes the lease through WatchLease (runtime.LeaseWatcher), so
// the stalled process does not wait for its next write to find out: when
// its heartbeat finds the row gone or carrying another token, the run is
// cancelled at once, its nodes see their context done, runtime.Step starts
// no new effect, and the run ends with an error matching ErrLeaseLost.
package sqlite
