package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// info reads thread id's stored record afresh (its metadata and the
// outcome of its last run); nil when the store has none or the read fails.
func (s *Server) info(ctx context.Context, id string) *runtime.ThreadInfo {
	page, err := s.records.ListThreads(ctx, runtime.ThreadQuery{ID: id, Limit: 1})
	if err != nil {
		s.log.Warn("server: reading a thread's record failed", "thread", id, "err", err)
		return nil
	}
	for i := range page.Threads {
		if page.Threads[i].ID == id {
			return &page.Threads[i]
		}
	}
	return nil
}

// noteRun adds run id of kind to the runs the thread's record lists, so
// that GET .../runs finds it after a restart or in another process: when
// the run starts, or ends without having started (a queued request
// cancelled, replaced or refused; Server.finish). A
// failed write is logged: the run goes on, and is found in memory while
// this process lives.
func (s *Server) noteRun(ctx context.Context, thread, id, kind string) {
	s.noteMu.Lock()
	defer s.noteMu.Unlock()
	var list []string
	if info := s.info(ctx, thread); info != nil {
		list = strings.Fields(info.Meta[metaRuns])
	}
	if slices.Contains(list, id+":"+kind) {
		return // listed already: a request retried with its Idempotency-Key
	}
	list = append(list, id+":"+kind)
	if len(list) > maxRunsKept {
		list = list[len(list)-maxRunsKept:]
	}
	if err := s.records.RecordThread(ctx, thread, checkpoint.ThreadWrite{Meta: map[string]string{metaRuns: strings.Join(list, " ")}}); err != nil {
		s.log.Error("server: recording a run in its thread's record failed", "thread", thread, "run", id, "err", err)
	}
}

// storedRun reads run id of thread t from the store's event log: what a
// run this process does not hold (it ran before a restart, or in another
// process) left there. A run whose log has no run_end reads as running
// while it may go on (Server.lostEnd).
func (s *Server) storedRun(ctx context.Context, t threadRecord, id, kind string) (RunView, error) {
	missing := notFound("thread " + t.ID + " has no run " + id)
	if s.events == nil {
		return RunView{}, missing
	}
	evs, err := s.events.ReadEvents(ctx, id, 0, 0)
	if err != nil {
		return RunView{}, err
	}
	if len(evs) == 0 || evs[0].ThreadID != t.ID {
		return RunView{}, missing
	}
	if kind == "" {
		kind = s.runKind(ctx, t.ID, id)
	}
	v := RunView{RunID: id, ThreadID: t.ID, Graph: t.Graph, Kind: kind, Status: runtime.StatusRunning, Created: evs[0].Time}
	for _, se := range evs {
		v.LastSeq = se.Seq
		var ev struct {
			CheckpointID string                     `json:"checkpoint_id"`
			Pending      []runtime.PendingInterrupt `json:"pending"`
			Status       runtime.Status             `json:"status"`
			Error        string                     `json:"error"`
		}
		switch runtime.EventType(se.Kind) {
		case runtime.EventCheckpoint, runtime.EventInterrupt, runtime.EventRunEnd:
			if err := json.Unmarshal(se.Data, &ev); err != nil {
				return RunView{}, err
			}
		default:
			continue
		}
		switch runtime.EventType(se.Kind) {
		case runtime.EventCheckpoint:
			v.CheckpointID = ev.CheckpointID
		case runtime.EventInterrupt:
			v.Pending = ev.Pending
		case runtime.EventRunEnd:
			v.Status, v.Error = ev.Status, ev.Error
			ended := se.Time
			v.Ended = &ended
		}
	}
	if v.Ended == nil {
		// No run_end: still going, unless it can go on nowhere.
		if end, ok := s.lostEnd(ctx, t, id, evs[0].Time); ok {
			v.Status, v.Error = end.Status, end.Error
			if end.Ended.IsZero() {
				end.Ended = evs[len(evs)-1].Time
			}
			v.Ended = &end.Ended
		}
	}
	return v, nil
}

// lostEnd says how run id of thread t ended when its stored event log,
// which it began at started, holds no run_end; ok is false while the run
// may be going on. A run that can go on nowhere reads ended:
//
//   - a later run of the thread started, which it could not have while
//     this one held the thread: aborted;
//   - no run holds the thread's lease (Server.leaseFree) and the thread
//     recorded an outcome after the run began: the run ended so (the
//     runtime records the outcome with the write that gives the lease
//     back), its run_end lost with its process or not yet written; the
//     thread's record is read after the probe, so a run that ended just
//     before it is read as it ended;
//   - no run holds the thread's lease and the thread recorded no outcome
//     since: the run's process ended before the run did (a crash, a kill)
//     and its lease expired: aborted, with what to do.
//
// The record read after the probe is checked for a later run too, before
// its outcome is taken: a later run that started and ended between the
// two reads recorded its own outcome there, which is not this run's; the
// run then reads aborted, as a later run took the thread.
//
// A zero Ended in the outcome stands for the time of the run's last event.
func (s *Server) lostEnd(ctx context.Context, t threadRecord, id string, started time.Time) (checkpoint.ThreadOutcome, bool) {
	tookOver := checkpoint.ThreadOutcome{Status: runtime.StatusAborted, Error: "the run's process ended before the run did; a later run took the thread"}
	info := s.info(ctx, t.ID)
	if laterRun(info, id) {
		return tookOver, true
	}
	if !s.leaseFree(ctx, t.ID, id) {
		return checkpoint.ThreadOutcome{}, false
	}
	// Read again: the run may have ended between the read above and the
	// probe, recording its outcome as it gave the lease back; the record
	// read before would take it for a run whose process ended. A later
	// run may have started and ended since too: the outcome is then its.
	info = s.info(ctx, t.ID)
	if laterRun(info, id) {
		return tookOver, true
	}
	if info != nil && info.Outcome.Status != "" && !info.Outcome.Ended.Before(started) {
		o := info.Outcome
		return checkpoint.ThreadOutcome{Status: o.Status, Error: o.Error, Ended: o.Ended}, true
	}
	return checkpoint.ThreadOutcome{Status: runtime.StatusAborted, Error: "the run's process ended before the run did, and no run holds thread " + t.ID +
		"'s lease any more; continue the thread with POST /threads/" + t.ID + "/runs {}"}, true
}

// leaseRetry is how long a thread's lease found held by another process is
// taken as held before Server.leaseFree tries it again.
const leaseRetry = time.Second

// leaseFree reports whether no run holds thread's lease, for run id of the
// thread, which the store's event log holds without a run_end: it takes
// the lease, and gives it back at once, when this process neither knows
// the run nor has a run of the thread queued or running (its own would
// hold the lease, or be about to take it). A lease is free when no run
// took it or its holder stopped renewing it (a process that ended or
// stalled past the lease's time to live, whose run the store fences). A
// run found so stays so: it cannot take the lease again. A lease found
// held is taken as held for leaseRetry, a failed try as held.
func (s *Server) leaseFree(ctx context.Context, thread, id string) bool {
	s.mu.Lock()
	_, here := s.runs[id]
	busy := s.queues[thread] != nil
	free := s.freeRuns[id]
	recent := time.Since(s.heldAt[thread]) < leaseRetry
	s.mu.Unlock()
	switch {
	case free:
		return true
	case here || busy || recent:
		return false
	}
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	l, err := s.cfg.Checkpointer.Lease(tctx, thread, checkpoint.LeaseOptions{})
	if err != nil {
		if !errors.Is(err, runtime.ErrThreadBusy) {
			s.log.Warn("server: trying a thread's lease failed; its run without a run_end reads as running", "thread", thread, "run", id, "err", err)
		}
		s.mu.Lock()
		if len(s.heldAt) >= maxLeaseNotes {
			clear(s.heldAt)
		}
		s.heldAt[thread] = time.Now()
		s.mu.Unlock()
		return false
	}
	l.Release()
	s.mu.Lock()
	if len(s.freeRuns) >= maxLeaseNotes {
		clear(s.freeRuns)
	}
	s.freeRuns[id] = true
	delete(s.heldAt, thread)
	s.mu.Unlock()
	return true
}

// maxLeaseNotes bounds Server.freeRuns and heldAt: past it they are
// cleared, and found again as they are needed.
const maxLeaseNotes = 4096

// runIDs lists the runs the thread's record holds, oldest first.
func (s *Server) runIDs(ctx context.Context, thread string) []string {
	return listedRuns(s.info(ctx, thread))
}

// listedRuns lists the ids of the runs a thread's record holds, oldest
// first; none for a nil record.
func listedRuns(info *runtime.ThreadInfo) []string {
	if info == nil {
		return nil
	}
	var out []string
	for _, e := range strings.Fields(info.Meta[metaRuns]) {
		id, _, _ := strings.Cut(e, ":")
		out = append(out, id)
	}
	return out
}

// laterRun reports whether a thread's record lists run id and a run
// started after it.
func laterRun(info *runtime.ThreadInfo, id string) bool {
	runs := listedRuns(info)
	return len(runs) > 0 && runs[len(runs)-1] != id && slices.Contains(runs, id)
}

// runKind is the kind of run id as its thread's record lists it ("run"
// when it does not).
func (s *Server) runKind(ctx context.Context, thread, id string) string {
	if info := s.info(ctx, thread); info != nil {
		for _, e := range strings.Fields(info.Meta[metaRuns]) {
			if rid, kind, _ := strings.Cut(e, ":"); rid == id {
				return kind
			}
		}
	}
	return "run"
}

// anyRun reads run id of thread t wherever it is: in this process, in
// Config.Queue, or in the store's event log.
func (s *Server) anyRun(ctx context.Context, t threadRecord, id, kind string) (*run, RunView, error) {
	if qid, ok := s.queuedID(id); ok {
		v, err := s.queuedView(ctx, t, id, qid)
		if err == nil && kind != "" {
			v.Kind = kind
		}
		return nil, v, err
	}
	s.mu.Lock()
	ru := s.runs[id]
	s.mu.Unlock()
	if ru != nil && ru.thread == t.ID {
		return ru, ru.view(), nil
	}
	v, err := s.storedRun(ctx, t, id, kind)
	return nil, v, err
}

// RunList is GET /threads/{id}/runs: the thread's latest runs (at most
// 50), newest first.
type RunList struct {
	Runs []RunView `json:"runs"`
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request, p Principal) error {
	t, err := s.thread(r.Context(), p, r.PathValue("thread_id"), ActionRead)
	if err != nil {
		return err
	}
	kinds := map[string]string{}
	var ids []string
	if info := s.info(r.Context(), t.ID); info != nil {
		for _, e := range strings.Fields(info.Meta[metaRuns]) {
			id, kind, _ := strings.Cut(e, ":")
			if _, dup := kinds[id]; !dup {
				ids = append(ids, id)
			}
			kinds[id] = kind
		}
	}
	s.mu.Lock()
	for _, id := range s.runOrder {
		if ru := s.runs[id]; ru != nil && ru.thread == t.ID {
			if _, dup := kinds[id]; !dup {
				ids = append(ids, id)
				kinds[id] = ru.kind
			}
		}
	}
	s.mu.Unlock()
	// Newest first: the record lists runs in the order they started (a
	// queued run, not yet in the record, comes after them; its view has no
	// times to sort by).
	slices.Reverse(ids)
	out := RunList{Runs: []RunView{}}
	for _, id := range ids {
		_, v, err := s.anyRun(r.Context(), t, id, kinds[id])
		if isNotFound(err) {
			continue // its events were pruned or deleted
		}
		if err != nil {
			return err
		}
		out.Runs = append(out.Runs, v)
	}
	return writeJSON(w, http.StatusOK, out)
}

// checkpointView is cp's view; parent, when not nil, is its parent, which
// says what the superstep that wrote cp ran and changed.
func checkpointView(cp, parent *runtime.Checkpoint) CheckpointView {
	cv := CheckpointView{CheckpointID: cp.ID, ParentID: cp.ParentID, Step: cp.Step, Created: cp.Created, Values: cp.Channels,
		Next: []string{}, Pending: []runtime.PendingInterrupt{}, Nodes: []string{}, Writes: []string{}}
	for _, n := range cp.Next {
		cv.Next = append(cv.Next, n.Key)
	}
	if cp.Pending != nil {
		cv.Pending = cp.Pending
	}
	if parent == nil {
		return cv
	}
	started := parent.Created
	cv.Started = &started
	cv.DurationMS = float64(cp.Created.Sub(parent.Created)) / float64(time.Millisecond)
	if cp.Step > parent.Step {
		for _, n := range parent.Next {
			if !slices.Contains(cv.Nodes, n.Node) {
				cv.Nodes = append(cv.Nodes, n.Node)
			}
		}
	}
	var now, before map[string]json.RawMessage
	if json.Unmarshal(cp.Channels, &now) == nil && json.Unmarshal(parent.Channels, &before) == nil {
		for k, v := range now {
			if !bytes.Equal(v, before[k]) {
				cv.Writes = append(cv.Writes, k)
			}
		}
		slices.Sort(cv.Writes)
	}
	return cv
}

func (s *Server) checkpointAt(w http.ResponseWriter, r *http.Request, p Principal) error {
	t, err := s.thread(r.Context(), p, r.PathValue("thread_id"), ActionRead)
	if err != nil {
		return err
	}
	id := r.PathValue("checkpoint_id")
	cp, err := s.cfg.Checkpointer.Get(r.Context(), t.ID, id)
	if errors.Is(err, runtime.ErrNotFound) {
		return notFound("thread " + t.ID + " has no checkpoint " + id)
	}
	if err != nil {
		return err
	}
	var parent *runtime.Checkpoint
	if cp.ParentID != "" {
		if parent, err = s.cfg.Checkpointer.Get(r.Context(), t.ID, cp.ParentID); errors.Is(err, runtime.ErrNotFound) {
			parent = nil // pruned
		} else if err != nil {
			return err
		}
	}
	return writeJSON(w, http.StatusOK, checkpointView(cp, parent))
}

func (s *Server) deleteThread(w http.ResponseWriter, r *http.Request, p Principal) error {
	t, err := s.thread(r.Context(), p, r.PathValue("thread_id"), ActionDelete)
	if err != nil {
		return err
	}
	if _, busy := s.threadBusy(t.ID); busy {
		return errf(http.StatusConflict, "thread-busy", "The thread is busy",
			"thread "+t.ID+" has a run queued or running; cancel it (POST .../runs/{run}/cancel), then delete the thread")
	}
	if s.cfg.Queue != nil {
		// A request the workers have queued or running holds the thread.
		for _, id := range s.runIDs(r.Context(), t.ID) {
			if qid, ok := s.queuedID(id); ok {
				if o, err := s.cfg.Queue.Outcome(r.Context(), qid); err == nil && !o.Ended() {
					return errf(http.StatusConflict, "thread-busy", "The thread is busy",
						"thread "+t.ID+" has run "+id+" queued or running; cancel it (POST .../runs/"+id+"/cancel), then delete the thread")
				}
			}
		}
	}
	if err := s.cfg.Checkpointer.DeleteThread(r.Context(), t.ID); err != nil {
		return err
	}
	if m, ok := s.records.(memRecords); ok {
		if err := m.m.DeleteThread(r.Context(), t.ID); err != nil {
			return err
		}
	}
	s.cache.Delete(t.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
