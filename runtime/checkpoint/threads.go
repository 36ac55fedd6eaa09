package checkpoint

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
)

// ThreadOutcome is how the last run of a thread ended, as the executor
// recorded it (ThreadRecorder). A run that was refused (a busy thread, a
// resume whose answers do not fit) records nothing; a run whose process
// died leaves the outcome of the run before it.
type ThreadOutcome struct {
	// Status is done, interrupted, parked, error or aborted; "" when no run of the
	// thread has ended yet (a thread created by metadata alone, or one
	// whose only run is still going).
	Status Status `json:"status,omitempty"`
	// RunID is the id of the run that ended (Result.RunID).
	RunID string `json:"run_id,omitempty"`
	// Ended is when the run ended.
	Ended time.Time `json:"ended,omitzero"`
	// Error is the run's error text (error, aborted, and an interrupted
	// run that paused again on a refused answer), cut to MaxOutcomeError
	// bytes.
	Error string `json:"error,omitempty"`
}

// MaxOutcomeError is the most bytes of a run's error text a thread's
// outcome keeps; a longer text is cut at a character boundary and ends in
// "…".
const MaxOutcomeError = 1024

// ThreadInfo is one thread as ListThreads finds it.
type ThreadInfo struct {
	ID string `json:"id"`
	// Meta is the thread's metadata (WithThreadMeta, ThreadRecorder); nil
	// when it has none.
	Meta map[string]string `json:"meta,omitempty"`
	// Updated is when the thread was last written: its latest checkpoint's
	// creation time, or the time its metadata or outcome was recorded,
	// whichever is later. The SQL stores (SQLite, PostgreSQL) rewrite a
	// thread's row for a checkpoint only when the row is 100 ms older, so
	// while a run writes, Updated may lag its latest checkpoint by less
	// than 100 ms; a run's outcome, recorded with its last write, brings it
	// up to date when the run ends. Memory keeps it exact.
	Updated time.Time `json:"updated"`
	// Outcome is how the thread's last run ended (zero when none has).
	Outcome ThreadOutcome `json:"outcome"`
	// Pending lists the interrupts the thread's last run paused on when
	// Outcome.Status is StatusInterrupted, sorted by id: what an inbox
	// shows, and answers with Resume and AnswersByID; and the timers a
	// parked thread waits on (StatusParked, PendingInterrupt.Timer and
	// WakeAt). Empty otherwise.
	Pending []PendingInterrupt `json:"pending,omitempty"`
}

// ThreadQuery selects and pages the threads ListThreads returns. Every
// condition set must hold.
type ThreadQuery struct {
	// ID, when not empty, keeps the thread of that id alone: the read of
	// one thread's record (its metadata and last outcome). The stores find
	// it by its key, so the read costs the same among a million threads as
	// among ten; a metadata condition naming the thread instead makes them
	// scan every record.
	ID string
	// Status keeps the threads whose last run ended so; "" keeps all. It
	// is the recorded outcome, not ThreadStatus (OutcomeFilter says when
	// the two select alike).
	Status Status
	// Meta keeps the threads whose metadata holds every given key with
	// exactly the given value.
	Meta map[string]string
	// UpdatedAfter and UpdatedBefore keep the threads last updated
	// strictly after, or strictly before, the given time; zero: no bound.
	UpdatedAfter, UpdatedBefore time.Time
	// Limit is the most threads one page holds: 0 means
	// DefaultThreadLimit, more than MaxThreadLimit means MaxThreadLimit.
	Limit int
	// Cursor continues a listing where the page that returned it
	// (ThreadPage.Next) ended; "" starts at the most recently updated
	// thread.
	Cursor string
}

// DefaultThreadLimit and MaxThreadLimit bound ThreadQuery.Limit.
const (
	DefaultThreadLimit = 50
	MaxThreadLimit     = 1000
)

// ThreadPage is one page of ListThreads.
type ThreadPage struct {
	// Threads are ordered by Updated, newest first; threads updated at the
	// same instant by id, descending.
	Threads []ThreadInfo `json:"threads"`
	// Next is the cursor of the next page (ThreadQuery.Cursor); "" when
	// this page is the last.
	Next string `json:"next,omitempty"`
}

// ThreadLister is a Checkpointer that can find threads (Memory, the
// SQLite and the PostgreSQL stores implement it).
//
// Paging is stable under concurrent updates: a cursor is a position in
// the order (updated time, thread id), so a later page never repeats a
// thread of an earlier one, and holds every matching thread that was not
// updated in between and comes after the cursor. A thread updated while a
// listing pages moves to the front, which the listing has passed: list
// again from the start to see it.
type ThreadLister interface {
	// ListThreads returns the page of threads q selects. It fails with an
	// error matching ErrThreadQuery for a malformed query or cursor.
	ListThreads(ctx context.Context, q ThreadQuery) (ThreadPage, error)
}

// ThreadWrite is what a run records of its thread besides checkpoints:
// metadata to merge, and the outcome of the run.
type ThreadWrite struct {
	// Meta is merged into the thread's metadata: each key is set to its
	// value, and a key given the value "" is removed; keys not given stay.
	// Nil leaves the metadata as it is.
	Meta map[string]string
	// Outcome, when not nil, replaces the thread's outcome, and Pending
	// its pending interrupts.
	Outcome *ThreadOutcome
	Pending []PendingInterrupt
}

// ThreadRecorder is a Checkpointer that keeps per-thread metadata and the
// outcome of each thread's last run, for ListThreads (Memory, the SQLite
// and the PostgreSQL stores implement it). The executor uses it when the
// run's checkpointer has it:
//
//   - the metadata of WithThreadMeta, and the outcome of a run that ends
//     done or interrupted, travel with the run's checkpoint writes
//     (Commit.Thread): recorded in the same atomic commit as the
//     checkpoint, fenced the same way;
//   - what no checkpoint carried (the outcome error or aborted: a failed
//     superstep writes no checkpoint) is recorded by the run's final
//     Lease.Commit, without a checkpoint.
type ThreadRecorder interface {
	// RecordThread records w for the thread, creating its record when it
	// has none, without a lease (a run records through Lease.Commit).
	RecordThread(ctx context.Context, threadID string, w ThreadWrite) error
}

// ErrThreadQuery is matched (errors.Is) by the error of ListThreads for a
// query it cannot run: an unknown status, an empty metadata key, a
// negative limit, or a cursor that no listing returned.
var ErrThreadQuery = errors.New("invalid thread query")

// threadQueryError is an ErrThreadQuery naming what is wrong.
type threadQueryError struct{ msg string }

func (e *threadQueryError) Error() string        { return "checkpoint: " + e.msg }
func (e *threadQueryError) Is(target error) bool { return target == ErrThreadQuery }

// ThreadCursor is a position in the order of ListThreads: the last thread
// of a page. For backends.
type ThreadCursor struct {
	Updated int64 // UnixNano
	ID      string
}

// EncodeThreadCursor returns the opaque cursor of position c.
func EncodeThreadCursor(c ThreadCursor) string {
	return "t1." + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.Updated, 10)+"/"+c.ID))
}

// After reports whether a thread last updated at updated (UnixNano) with id
// comes after the position c in the order of ListThreads.
func (c ThreadCursor) After(updated int64, id string) bool {
	return updated < c.Updated || (updated == c.Updated && id < c.ID)
}

// CheckThreadQuery validates q and returns its limit and cursor (nil for
// ""), as every backend interprets them. For backends.
func CheckThreadQuery(q ThreadQuery) (limit int, cursor *ThreadCursor, err error) {
	switch q.Status {
	case "", StatusDone, StatusInterrupted, StatusParked, StatusError, StatusAborted:
	default:
		return 0, nil, &threadQueryError{fmt.Sprintf("thread query: status %q is not one of done, interrupted, parked, error, aborted (or \"\" for any)", q.Status)}
	}
	for k := range q.Meta {
		if k == "" {
			return 0, nil, &threadQueryError{"thread query: a metadata condition has an empty key"}
		}
	}
	switch {
	case q.Limit < 0:
		return 0, nil, &threadQueryError{fmt.Sprintf("thread query: limit %d is negative; use 0 for the default (%d)", q.Limit, DefaultThreadLimit)}
	case q.Limit == 0:
		limit = DefaultThreadLimit
	default:
		limit = min(q.Limit, MaxThreadLimit)
	}
	if q.Cursor == "" {
		return limit, nil, nil
	}
	bad := &threadQueryError{fmt.Sprintf("thread query: cursor %q was not returned by a listing (ThreadPage.Next); start again with an empty cursor", q.Cursor)}
	rest, ok := strings.CutPrefix(q.Cursor, "t1.")
	if !ok {
		return 0, nil, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return 0, nil, bad
	}
	ns, id, ok := strings.Cut(string(raw), "/")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil {
		return 0, nil, bad
	}
	return limit, &ThreadCursor{Updated: n, ID: id}, nil
}

// MatchThread reports whether a thread with the given status, metadata and
// update time (UnixNano) satisfies q's conditions (not its ID or cursor,
// which select records before their conditions are checked). For backends
// that filter in Go.
func MatchThread(q ThreadQuery, status Status, meta map[string]string, updated int64) bool {
	if q.Status != "" && status != q.Status {
		return false
	}
	if !q.UpdatedAfter.IsZero() && updated <= q.UpdatedAfter.UnixNano() {
		return false
	}
	if !q.UpdatedBefore.IsZero() && updated >= q.UpdatedBefore.UnixNano() {
		return false
	}
	for k, v := range q.Meta {
		if got, ok := meta[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// MergeMeta returns meta with w merged in (see ThreadWrite.Meta): nil when
// nothing is left. For backends.
func MergeMeta(meta, w map[string]string) map[string]string {
	if len(w) == 0 {
		return meta
	}
	out := maps.Clone(meta)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range w {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
