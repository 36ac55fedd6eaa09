package checkpoint

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"
)

// memRec is what Memory keeps of a thread besides its checkpoints.
type memRec struct {
	meta    map[string]string
	outcome ThreadOutcome
	pending []PendingInterrupt
	updated int64 // UnixNano
}

// memRun is the stored event log of one run.
type memRun struct {
	thread string
	events []StoredEvent
}

var (
	_ ThreadLister   = (*Memory)(nil)
	_ ThreadRecorder = (*Memory)(nil)
	_ EventStore     = (*Memory)(nil)
)

// rec returns the record of thread, made when missing; m.mu is held.
func (m *Memory) rec(threadID string) *memRec {
	if m.recs == nil {
		m.recs = map[string]*memRec{}
	}
	r := m.recs[threadID]
	if r == nil {
		r = &memRec{}
		m.recs[threadID] = r
	}
	return r
}

// touch records a stored checkpoint in its thread's record; m.mu is held.
func (m *Memory) touch(cp *Checkpoint) { m.rec(cp.ThreadID).touch(cp.Created) }

// touch records a checkpoint created at c.
func (r *memRec) touch(c time.Time) {
	if !c.IsZero() { // (the zero Time has no UnixNano)
		r.updated = max(r.updated, c.UnixNano())
	}
}

// apply records w in r.
func (r *memRec) apply(w ThreadWrite) {
	now := time.Now().UnixNano()
	r.meta = MergeMeta(r.meta, w.Meta)
	if w.Outcome != nil {
		r.outcome = *w.Outcome
		r.pending = slices.Clone(w.Pending)
		if !w.Outcome.Ended.IsZero() {
			now = w.Outcome.Ended.UnixNano()
		}
	}
	r.updated = max(r.updated, now)
}

// RecordThread merges w's metadata into the thread's and records its
// outcome, unleased.
func (m *Memory) RecordThread(_ context.Context, threadID string, w ThreadWrite) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rec(threadID).apply(w)
	return nil
}

// ListThreads returns the page of threads q selects.
func (m *Memory) ListThreads(_ context.Context, q ThreadQuery) (ThreadPage, error) {
	limit, cursor, err := CheckThreadQuery(q)
	if err != nil {
		return ThreadPage{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := m.recs
	if q.ID != "" {
		// One record, found by its key.
		recs = nil
		if r, ok := m.recs[q.ID]; ok {
			recs = map[string]*memRec{q.ID: r}
		}
	}
	var out []ThreadInfo
	for id, r := range recs {
		if cursor != nil && !cursor.After(r.updated, id) {
			continue
		}
		if !MatchThread(q, r.outcome.Status, r.meta, r.updated) {
			continue
		}
		info := ThreadInfo{ID: id, Meta: maps.Clone(r.meta), Updated: time.Unix(0, r.updated).UTC(), Outcome: r.outcome}
		if r.outcome.Status == StatusInterrupted || r.outcome.Status == StatusParked {
			info.Pending = slices.Clone(r.pending)
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b ThreadInfo) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	var page ThreadPage
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		page.Next = EncodeThreadCursor(ThreadCursor{Updated: last.Updated.UnixNano(), ID: last.ID})
	}
	page.Threads = out
	return page, nil
}

// AppendEvents stores events of one run, keeping those of its last
// MaxStoredEvents sequence numbers; unleased.
func (m *Memory) AppendEvents(_ context.Context, events []StoredEvent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.appendEvents(events)
	return nil
}

// appendEvents is AppendEvents with m.mu held.
func (m *Memory) appendEvents(events []StoredEvent) {
	if len(events) == 0 {
		return
	}
	if m.runs == nil {
		m.runs = map[string]*memRun{}
	}
	touched := map[*memRun]bool{}
	for _, e := range events {
		run := m.runs[e.RunID]
		if run == nil {
			run = &memRun{thread: e.ThreadID}
			m.runs[e.RunID] = run
		}
		e.Data = slices.Clone(e.Data)
		touched[run] = true
		if n := len(run.events); n > 0 && e.Seq <= run.events[n-1].Seq {
			// Stored again (a retried write): each Seq once.
			i, found := slices.BinarySearchFunc(run.events, e.Seq, func(x StoredEvent, seq int64) int { return cmp.Compare(x.Seq, seq) })
			if found {
				run.events[i] = e
			} else {
				run.events = slices.Insert(run.events, i, e)
			}
			continue
		}
		run.events = append(run.events, e)
	}
	for run := range touched {
		last := run.events[len(run.events)-1].Seq
		run.events = slices.DeleteFunc(run.events, func(e StoredEvent) bool { return e.Seq <= last-MaxStoredEvents })
	}
}

// ReadEvents returns the run's events after afterSeq, at most limit.
func (m *Memory) ReadEvents(_ context.Context, runID string, afterSeq int64, limit int) ([]StoredEvent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	run := m.runs[runID]
	if run == nil {
		return nil, nil
	}
	i, _ := slices.BinarySearchFunc(run.events, afterSeq+1, func(e StoredEvent, seq int64) int { return cmp.Compare(e.Seq, seq) })
	var out []StoredEvent
	for ; i < len(run.events) && (limit <= 0 || len(out) < limit); i++ {
		e := run.events[i]
		e.Data = slices.Clone(e.Data)
		out = append(out, e)
	}
	return out, nil
}

// dropEvents drops the thread's events that happened before cutoff (all
// of them for the zero time); m.mu is held.
func (m *Memory) dropEvents(threadID string, cutoff time.Time) {
	for id, run := range m.runs {
		if run.thread != threadID {
			continue
		}
		if cutoff.IsZero() {
			delete(m.runs, id)
			continue
		}
		run.events = slices.DeleteFunc(run.events, func(e StoredEvent) bool { return e.Time.Before(cutoff) })
		if len(run.events) == 0 {
			delete(m.runs, id)
		}
	}
}
