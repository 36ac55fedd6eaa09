package workers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/internal/pgside"
)

// Kind is what a request asks for.
type Kind string

const (
	// KindStart runs the thread with Input folded into its channels (or,
	// on a thread with a pending plan, continues it).
	KindStart Kind = "start"
	// KindResume answers the thread's pending interrupts with Input (a JSON
	// object of answers by interrupt id) and continues its run.
	KindResume Kind = "resume"
)

// Request is a run request.
type Request struct {
	// Graph names the registered graph (Worker's map) to run.
	Graph  string
	Thread string
	Kind   Kind // default KindStart
	// Input is the start input or the answers, as JSON.
	Input json.RawMessage
	// From, when set, runs the request from that earlier checkpoint of the
	// thread instead of its latest (runtime.Thread.Fork), which forks a
	// branch: a start request folds Input into the checkpoint's channels,
	// a resume request answers the questions pending at it.
	From string
	// Policy applies when the thread has another request queued or
	// running; default runtime.DoubleTextEnqueue.
	Policy runtime.DoubleTexting
	// Priority orders the claims: a request of a higher priority is
	// claimed before any of a lower one (default 0; negative is lower).
	// Requests of one thread still run in submission order.
	Priority int32
	// Partition is the request's partition key, for example its tenant
	// ("" for none; "*" is reserved): the limits of the partition
	// (Queue.SetLimit) apply to it, and requests of different partitions
	// of one priority take turns (see the package doc's "Flow control").
	Partition string
	// Key is the client's key for this request, unique within its thread
	// ("" for none). Submit with a key the thread's requests already hold
	// queues nothing and returns that request's id, so a Submit retried
	// after its reply was lost (a dropped connection, a timeout) neither
	// takes the same answers twice nor runs the same input again. The
	// same key with another graph, kind, input or checkpoint is refused
	// (ErrKeyReused). A key holds as long as the queue keeps its request
	// (Queue.Prune deletes ended ones). Derive it from what the request
	// answers, e.g. the checkpoint whose questions it answers and the
	// answers, so that a retry repeats it and the next question gets a
	// new one.
	Key string
	// ExpectedLatest, when set, runs the request only if the thread's
	// latest checkpoint is the one it names ("": the thread has none) when
	// a worker first runs it; otherwise the request ends with status
	// error and an error matching runtime.ErrThreadMoved, having written
	// nothing. Set it to the checkpoint whose questions a resume answers,
	// or that a start was decided against (runtime.WithExpectedLatest).
	// A fork (From) does not take it. A worker that took the request over
	// from one that died continues what that one committed.
	ExpectedLatest *string
}

// ErrKeyReused is matched by the error of a Submit whose Request.Key names
// a request of the thread that is not this one (another graph, kind,
// input or checkpoint): give each request its own key.
var ErrKeyReused = errors.New("the request key names another request of the thread")

// kindFork is the stored kind of a request with From set; its input is a
// forkInput.
const kindFork = "fork"

// forkInput is the stored input of a fork request.
type forkInput struct {
	From  string          `json:"from"`
	Kind  Kind            `json:"kind"`
	Input json.RawMessage `json:"input,omitempty"`
}

// Outcome is what became of a request.
type Outcome struct {
	ID     int64  `json:"id"`
	Thread string `json:"thread"`
	// State is queued, running, or an end: done, interrupted, parked (on
	// a timer: a worker wakes the thread when it is due), error, aborted
	// (cancelled while running), cancelled (before it ran, or a wake that
	// found nothing due) or dead (StateDead: its claims expired MaxClaims
	// times; Queue.Retry).
	State string `json:"state"`
	// Result is the thread's state after the run, as JSON.
	Result json.RawMessage `json:"result,omitempty"`
	// Pending lists the interrupts the thread waits on (state interrupted).
	Pending []runtime.PendingInterrupt `json:"pending,omitempty"`
	Error   string                     `json:"error,omitempty"`
	// Claims counts how many times workers claimed the request (more than
	// one after a worker died while running it).
	Claims int64 `json:"claims"`
	// Runs are the ids of the runs workers started for the request, in
	// order (more than one after a worker died while running it). A claim
	// that ran nothing (its run refused because another writer held or
	// moved the thread, or the request ended without a run) leaves no id
	// here. Each run's events are in the store's event log:
	// Store().ReadEvents(run, afterSeq, limit), from any process, while
	// the run goes on too.
	Runs []string `json:"runs,omitempty"`
}

// Ended reports whether the request has ended.
func (o Outcome) Ended() bool { return o.State != "queued" && o.State != "running" }

// ErrNoRequest is returned for an id the queue does not hold.
var ErrNoRequest = errors.New("no such run request")

// ErrWaitsOnPerson is matched by the error of a cancel-and-replace start
// refused because the thread waits on a person (its latest checkpoint has
// interrupts that are not timers): resume it instead.
var ErrWaitsOnPerson = errors.New("the thread waits on a person (pending interrupts); answer them with a resume request instead of replacing the run")

// Queue is the run-request queue in a store's schema.
type Queue struct {
	store   *postgres.Store
	s       string // the quoted schema
	ch      string // the NOTIFY channel
	waiters waiters
	local   localWorkers // the workers running on this Queue in this process
	// limited is set while the store holds a flow limit, as the last
	// claim found it: the claims skip the requests limits hold back.
	limited atomic.Bool
	// latestSQL reads the claimed thread's latest checkpoint in the
	// claim's transaction, readLatest makes it of its rows (claimread.go).
	latestSQL  string
	readLatest func(context.Context, pgx.Rows) (*checkpoint.Checkpoint, error)
	noRead     atomic.Bool // the server failed the read: claims no longer send it
}

// NewQueue returns the queue in store's schema (created by its migrations).
func NewQueue(store *postgres.Store) *Queue {
	q := &Queue{store: store, s: `"` + store.SchemaName() + `"`, ch: channel(store.SchemaName())}
	q.latestSQL, q.readLatest, _ = pgside.LatestRead(store, claimedThread)
	return q
}

// Store returns the queue's store.
func (q *Queue) Store() *postgres.Store { return q.store }

func (q *Queue) t(name string) string { return q.s + "." + name }

// Submit queues r and returns its id at once. Under runtime.DoubleTextReject
// it fails with an error matching runtime.ErrThreadBusy while the thread has
// a request queued or running; under runtime.DoubleTextCancelReplace it
// cancels those first (the running one stops at its next superstep
// boundary and ends aborted). A cancel-and-replace start (not a resume, not
// a fork: Request.From) fails with ErrWaitsOnPerson, and cancels nothing,
// when the thread's latest checkpoint has interrupts a person answers,
// whether or not a request is queued or running. A start under reject or
// enqueue is not refused for them here (a resume queued before it may
// answer them): if the thread still waits when it runs, the request ends
// in error, as runtime refuses input to a waiting thread
// (runtime.ErrWaitingOnPerson).
func (q *Queue) Submit(ctx context.Context, r Request) (int64, error) {
	if r.Kind == "" {
		r.Kind = KindStart
	}
	if r.Policy == "" {
		r.Policy = runtime.DoubleTextEnqueue
	}
	switch {
	case r.Graph == "" || r.Thread == "":
		return 0, fmt.Errorf("workers: submit: the request names no graph or no thread (graph %q, thread %q)", r.Graph, r.Thread)
	case r.Kind != KindStart && r.Kind != KindResume:
		return 0, fmt.Errorf("workers: submit: unknown kind %q: want %q or %q", r.Kind, KindStart, KindResume)
	case r.From != "" && r.ExpectedLatest != nil:
		return 0, fmt.Errorf("workers: submit a fork of thread %q: a fork starts from its checkpoint (From), not the latest; leave ExpectedLatest out", r.Thread)
	case r.Partition == anyPartition:
		return 0, fmt.Errorf("workers: submit to thread %q: partition key %q is reserved for the limits of every partition; name the request's own partition", r.Thread, anyPartition)
	}
	if err := r.Policy.Validate(); err != nil {
		return 0, fmt.Errorf("workers: submit to thread %q: %w", r.Thread, err)
	}
	kind, input := string(r.Kind), []byte(r.Input)
	if r.From != "" {
		var err error
		kind = kindFork
		if input, err = json.Marshal(forkInput{From: r.From, Kind: r.Kind, Input: r.Input}); err != nil {
			return 0, fmt.Errorf("workers: submit a fork of thread %q: %w", r.Thread, err)
		}
	}
	var id int64
	var key, expect any // the request's key and expected checkpoint, NULL for none
	if r.Key != "" {
		key = r.Key
	}
	if r.ExpectedLatest != nil {
		expect = *r.ExpectedLatest
	}
	if r.Policy == runtime.DoubleTextEnqueue && r.Key == "" {
		// One statement: it reads nothing, so it needs no transaction of
		// its own; the thread's lock (held to its commit) still orders it
		// after a submitter of another policy that holds it.
		err := q.store.Pool().QueryRow(ctx, `WITH l AS (SELECT pg_advisory_xact_lock(hashtextextended($1, 1))),
			`+q.inheritSQL("$10")+`,
			ins AS (INSERT INTO `+q.t("ilmek_requests")+` (thread_id, graph, kind, input, policy, priority, partition_key, expected_latest, fair_seq)
				SELECT $2, $3, $4, $5, $6, $9, $10, $11, `+q.fairSeqSQL("$9", "$10")+` FROM l RETURNING id)
			SELECT id, pg_notify($7, $8 || id) FROM ins`,
			q.s+"/"+r.Thread, r.Thread, r.Graph, kind, input, string(r.Policy), q.ch, noteNew, r.Priority, r.Partition, expect).Scan(&id, nil)
		if err != nil {
			return 0, fmt.Errorf("workers: submit a %s request for thread %q: %w", r.Kind, r.Thread, err)
		}
		q.local.submittedHere(id)
		return id, nil
	}
	var replaced []int64 // running requests a cancel-replace stops
	found := false       // the key named a request submitted before
	err := pgx.BeginFunc(ctx, q.store.Pool(), func(tx pgx.Tx) error {
		// One submitter per thread at a time, so the policy sees every
		// request before it.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 1))", q.s+"/"+r.Thread); err != nil {
			return err
		}
		if r.Key != "" {
			var graph, kind2 string
			var input2 []byte
			var expect2 *string
			err := tx.QueryRow(ctx, "SELECT id, graph, kind, input, expected_latest FROM "+q.t("ilmek_requests")+" WHERE thread_id = $1 AND request_key = $2", r.Thread, r.Key).Scan(&id, &graph, &kind2, &input2, &expect2)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
			case err != nil:
				return err
			case graph != r.Graph || kind2 != kind || !bytes.Equal(input2, input) || !sameExpectation(expect2, r.ExpectedLatest):
				return fmt.Errorf("%w: key %q is request %d's (graph %s, kind %s), not this %s request's of graph %s; give each request its own key", ErrKeyReused, r.Key, id, graph, kind2, kind, r.Graph)
			default:
				found = true
				return nil
			}
		}
		// A start from the latest checkpoint that replaces the runs would
		// be refused by the run when the thread waits on a person: the
		// same statement reads the latest checkpoint's pending interrupts.
		replace := r.Policy == runtime.DoubleTextCancelReplace
		checkWaiting := replace && r.Kind == KindStart && r.From == ""
		count := "SELECT count(*) FROM " + q.t("ilmek_requests") + " WHERE thread_id = $1 AND state IN ('queued', 'running')"
		var active int
		var pending []byte
		if checkWaiting {
			if err := tx.QueryRow(ctx, "SELECT ("+count+"), (SELECT pending FROM "+q.t("ilmek_checkpoints")+" WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1)", r.Thread).Scan(&active, &pending); err != nil {
				return err
			}
			if err := refuseIfWaiting(r.Thread, pending); err != nil {
				return err
			}
		} else if err := tx.QueryRow(ctx, count, r.Thread).Scan(&active); err != nil {
			return err
		}
		if active > 0 {
			switch r.Policy {
			case runtime.DoubleTextReject:
				return &busyError{thread: r.Thread, active: active, policy: r.Policy}
			case runtime.DoubleTextCancelReplace:
				var err error
				if _, replaced, err = cancelCount(ctx, tx, q, r.Thread); err != nil {
					return err
				}
			}
		}
		if err := tx.QueryRow(ctx, "WITH "+q.inheritSQL("$7")+" INSERT INTO "+q.t("ilmek_requests")+` (thread_id, graph, kind, input, policy, priority, partition_key, request_key, expected_latest, fair_seq)
			SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, `+q.fairSeqSQL("$6", "$7")+" RETURNING id",
			r.Thread, r.Graph, kind, input, string(r.Policy), r.Priority, r.Partition, key, expect).Scan(&id); err != nil {
			return err
		}
		return q.notify(ctx, tx, noteNew+strconv.FormatInt(id, 10))
	})
	if err != nil {
		return 0, fmt.Errorf("workers: submit a %s request for thread %q: %w", r.Kind, r.Thread, err)
	}
	if found {
		return id, nil
	}
	q.local.cancelledHere(replaced)
	q.local.submittedHere(id)
	return id, nil
}

// sameExpectation reports whether two requests expect the same checkpoint
// (or neither expects one).
func sameExpectation(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// refuseIfWaiting fails with ErrWaitsOnPerson when pending, the JSON of
// the thread's latest checkpoint's pending interrupts (nil when it has no
// checkpoint), lists any that a person answers (a timer's pause is not
// one).
func refuseIfWaiting(thread string, pending []byte) error {
	var p []runtime.PendingInterrupt
	if len(pending) == 0 || json.Unmarshal(pending, &p) != nil {
		return nil
	}
	var ids []string
	for _, pi := range p {
		if !pi.Timer {
			ids = append(ids, pi.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return fmt.Errorf("thread %q: %w (open: %s)", thread, ErrWaitsOnPerson, strings.Join(ids, ", "))
}

// busyError is the error of a request refused under
// runtime.DoubleTextReject: it matches runtime.ErrThreadBusy, and says what
// holds the thread (requests of the queue, not a run's lease).
type busyError struct {
	thread string
	active int
	policy runtime.DoubleTexting
}

func (e *busyError) Error() string {
	return fmt.Sprintf("thread %q is busy: it has %d run request(s) queued or running, and policy %s refuses another until they end: wait for them, or submit with policy %s or %s",
		e.thread, e.active, e.policy, runtime.DoubleTextEnqueue, runtime.DoubleTextCancelReplace)
}

func (e *busyError) Unwrap() error { return runtime.ErrThreadBusy }

// Cancel drops the thread's queued requests (they end cancelled) and asks
// its running one to stop at its next superstep boundary (it ends
// aborted). When that request's worker died, the claim that takes it over
// records the thread as the dead worker's run left it, once no run holds
// the thread: aborted, or the run's own outcome when it had ended before
// the cancel (done, interrupted). A parked thread is marked aborted, and
// its timers are not woken. It returns how many requests (and parked
// threads) it cancelled.
func (q *Queue) Cancel(ctx context.Context, thread string) (int, error) {
	var n int
	var running []int64
	err := pgx.BeginFunc(ctx, q.store.Pool(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 1))", q.s+"/"+thread); err != nil {
			return err
		}
		var err error
		n, running, err = cancelCount(ctx, tx, q, thread)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("workers: cancel the requests of thread %q: %w", thread, err)
	}
	q.local.cancelledHere(running)
	return n, nil
}

// cancelCount cancels the thread's queued requests and asks its running one
// to stop, notifying the waiters of the first and the worker of the second.
// It returns how many it cancelled and the ids of the running ones, which
// the caller hands to this process's workers once the transaction commits.
func cancelCount(ctx context.Context, tx pgx.Tx, q *Queue, thread string) (int, []int64, error) {
	n := 0
	var running []int64
	for _, c := range []struct{ update, note string }{
		{"SET state = 'cancelled', updated = clock_timestamp() WHERE thread_id = $1 AND state = 'queued'", noteEnd},
		{"SET cancel = true, updated = clock_timestamp() WHERE thread_id = $1 AND state = 'running'", noteCancel},
	} {
		rows, err := tx.Query(ctx, "UPDATE "+q.t("ilmek_requests")+" "+c.update+" RETURNING id", thread)
		if err != nil {
			return 0, nil, err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return 0, nil, err
		}
		for _, id := range ids {
			if err := q.notify(ctx, tx, c.note+strconv.FormatInt(id, 10)); err != nil {
				return 0, nil, err
			}
		}
		if c.note == noteCancel {
			running = ids
		}
		n += len(ids)
	}
	parked, err := cancelTimers(ctx, tx, q, thread)
	if parked {
		n++
	}
	return n, running, err
}

// Outcome returns what became of request id so far.
func (q *Queue) Outcome(ctx context.Context, id int64) (Outcome, error) {
	o := Outcome{ID: id}
	var result []byte
	err := q.store.Pool().QueryRow(ctx, "SELECT thread_id, state, result, error, claim, run_ids FROM "+q.t("ilmek_requests")+" WHERE id = $1", id).
		Scan(&o.Thread, &o.State, &result, &o.Error, &o.Claims, &o.Runs)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, fmt.Errorf("workers: request %d in schema %q: %w", id, q.store.SchemaName(), ErrNoRequest)
	}
	if err != nil {
		return o, fmt.Errorf("workers: read request %d: %w", id, err)
	}
	return o, o.setResult(result)
}

// setResult sets o's Result and Pending from the request's result column
// (nil until it ended).
func (o *Outcome) setResult(result []byte) error {
	if result == nil {
		return nil
	}
	var r struct {
		State   json.RawMessage            `json:"state"`
		Pending []runtime.PendingInterrupt `json:"pending"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("workers: request %d: the recorded outcome is corrupt: %w", o.ID, err)
	}
	o.Result, o.Pending = r.State, r.Pending
	return nil
}

// Wait returns request id's outcome once it has ended, or ctx's error. It
// listens for the notification the worker sends when it records the
// outcome, and reads the outcome again at least every poll (default 1 s)
// in case a notification was lost. A read that fails with a transient
// error (a connection cut, a server restart) is tried again until ctx is
// done. When a worker running on this Queue in this process records the
// outcome, it hands it to Wait directly, with no read.
func (q *Queue) Wait(ctx context.Context, id int64, poll time.Duration) (Outcome, error) {
	if poll <= 0 {
		poll = time.Second
	}
	wt, done := q.addWaiter(id)
	defer done()
	for {
		if o := q.delivered(wt); o != nil {
			return *o, nil
		}
		o, err := q.Outcome(ctx, id)
		switch {
		case err != nil && transient(err):
			// A read: try again at the next notification or poll (a
			// notification may have been missed too: poll soon).
			poll = min(poll, 100*time.Millisecond)
		case err != nil || o.Ended():
			return o, err
		}
		select {
		case <-ctx.Done():
			return o, fmt.Errorf("workers: wait for request %d: %w", id, ctx.Err())
		case <-wt.ch:
		case <-time.After(poll):
		}
	}
}
