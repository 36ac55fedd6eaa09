package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// route is one route of the API: its method, its path pattern and the
// handler serving it.
type route struct {
	method, path string
	serve        func(s *Server, w http.ResponseWriter, r *http.Request, p Principal) error
}

// routes lists every route the server serves, once: the mux is built from
// it and the OpenAPI test checks it against openapi.json.
var routes = []route{
	{"GET", "/openapi.json", (*Server).getOpenAPI},
	{"GET", "/graphs", (*Server).listGraphs},
	{"POST", "/threads", (*Server).createThread},
	{"GET", "/threads", (*Server).listThreads},
	{"GET", "/threads/{thread_id}", (*Server).getThread},
	{"DELETE", "/threads/{thread_id}", (*Server).deleteThread},
	{"GET", "/threads/{thread_id}/history", (*Server).history},
	{"GET", "/threads/{thread_id}/history/{checkpoint_id}", (*Server).checkpointAt},
	{"POST", "/threads/{thread_id}/history/{checkpoint_id}/fork", (*Server).fork},
	{"GET", "/threads/{thread_id}/diagram", (*Server).diagram},
	{"POST", "/threads/{thread_id}/runs", (*Server).startRun},
	{"POST", "/threads/{thread_id}/resume", (*Server).resume},
	{"GET", "/threads/{thread_id}/runs", (*Server).listRuns},
	{"GET", "/threads/{thread_id}/runs/{run_id}", (*Server).getRun},
	{"GET", "/threads/{thread_id}/runs/{run_id}/wait", (*Server).waitRun},
	{"GET", "/threads/{thread_id}/runs/{run_id}/stream", (*Server).streamRun},
	{"POST", "/threads/{thread_id}/runs/{run_id}/cancel", (*Server).cancelRun},
	{"GET", "/schedules", (*Server).listSchedules},
	{"POST", "/schedules", (*Server).createSchedule},
	{"GET", "/schedules/{schedule}", (*Server).getSchedule},
	{"DELETE", "/schedules/{schedule}", (*Server).deleteSchedule},
	{"POST", "/schedules/{schedule}/pause", (*Server).pauseSchedule},
	{"POST", "/schedules/{schedule}/resume", (*Server).resumeSchedule},
	{"GET", "/queue/dead", (*Server).listDead},
	{"POST", "/queue/dead/{request_id}/retry", (*Server).retryDead},
}

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	for _, rt := range routes {
		s.mux.Handle(rt.method+" "+rt.path, s.wrap(func(w http.ResponseWriter, r *http.Request, p Principal) error {
			return rt.serve(s, w, r, p)
		}))
	}
	if !s.cfg.DisableInbox {
		s.inboxRoutes()
	}
	s.mux.Handle("/", s.wrap(func(w http.ResponseWriter, r *http.Request, _ Principal) error {
		return notFound("no route " + r.Method + " " + r.URL.Path + "; GET /openapi.json lists the routes")
	}))
}

// decode reads a JSON body into v; an empty body leaves v as it is.
func decode(r *http.Request, v any) error {
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		return nil
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return errf(http.StatusUnsupportedMediaType, "unsupported-media-type", "Unsupported media type",
				"send the body as application/json, not "+ct)
		}
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return err
	}
	if len(bytes.TrimSpace(buf.Bytes())) == 0 {
		return nil
	}
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("the body is not the JSON this route takes: " + err.Error())
	}
	if dec.More() {
		return badRequest("the body holds more than one JSON value")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// GraphView is a served graph in GET /graphs.
type GraphView struct {
	Name     string   `json:"name"`
	Versions []string `json:"versions"`
	Nodes    []string `json:"nodes"`
}

func (s *Server) listGraphs(w http.ResponseWriter, r *http.Request, _ Principal) error {
	out := struct {
		Graphs []GraphView `json:"graphs"`
	}{Graphs: []GraphView{}}
	for _, name := range s.names {
		g := s.graphs[name]
		gv := GraphView{Name: name}
		for _, v := range g.versions.All() {
			gv.Versions = append(gv.Versions, v.Fingerprint())
		}
		for _, n := range g.versions.Newest().Shape().Nodes {
			gv.Nodes = append(gv.Nodes, n.ID)
		}
		out.Graphs = append(out.Graphs, gv)
	}
	return writeJSON(w, http.StatusOK, out)
}

// ThreadView is the JSON form of a thread.
type ThreadView struct {
	ThreadID     string            `json:"thread_id"`
	Graph        string            `json:"graph"`
	Metadata     map[string]string `json:"metadata"`
	Created      time.Time         `json:"created"`
	Status       runtime.Status    `json:"status"`
	CheckpointID string            `json:"checkpoint_id,omitempty"`
	Step         int               `json:"step"`
	Values       json.RawMessage   `json:"values,omitempty"`
	Next         []string          `json:"next"`
	Pending      []PendingView     `json:"pending"`
	// Subgraphs lists where each child run inside the thread's tasks
	// stands (a child of a paused thread, at every depth); empty when no
	// task holds one.
	Subgraphs []SubgraphView `json:"subgraphs,omitempty"`
	LastRunID string         `json:"last_run_id,omitempty"`
	// WakeAt is when the thread is to be woken: its earliest timer
	// (status parked) or interrupt deadline; nil when it waits on none.
	WakeAt *time.Time `json:"wake_at,omitempty"`
}

// Thread statuses are the runtime's (runtime.Status), in ThreadView.Status
// and the status filter of GET /threads, by the rule checkpoint.ThreadStatus
// states (threadStatus): running (a run queued or going on here, or in
// another process on the same store that holds the thread's lease, as the
// store's event log shows, or a request a worker of Config.Queue holds:
// Server.held), interrupted
// (waiting on a person), parked (on timers, or stopped at a superstep
// boundary with work left), error or aborted (how its latest run ended),
// new (no checkpoint), done.
var threadStatuses = []runtime.Status{runtime.StatusNew, runtime.StatusRunning, runtime.StatusInterrupted,
	runtime.StatusParked, runtime.StatusDone, runtime.StatusError, runtime.StatusAborted}

type createThreadBody struct {
	Graph    string            `json:"graph"`
	ThreadID string            `json:"thread_id,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

func (s *Server) createThread(w http.ResponseWriter, r *http.Request, p Principal) error {
	var b createThreadBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if len(s.names) == 1 && b.Graph == "" {
		b.Graph = s.names[0]
	}
	if _, ok := s.graphs[b.Graph]; !ok {
		return errf(http.StatusUnprocessableEntity, "unknown-graph", "Unknown graph",
			fmt.Sprintf("no graph %q is served; GET /graphs lists them", b.Graph))
	}
	if b.ThreadID == "" {
		b.ThreadID = newID()
	} else if err := runtime.CheckThreadID(b.ThreadID); err != nil {
		return badRequest(err.Error())
	}
	meta := map[string]string{}
	for k, v := range b.Metadata {
		meta[k] = v
	}
	for k := range meta {
		if reservedMeta(k) {
			return badRequest("metadata key " + k + ` is reserved: the server keeps the thread's graph, creation time, id and owner ("owner": the creating principal)`)
		}
	}
	meta["owner"] = p.ID
	t := threadRecord{ID: b.ThreadID, Graph: b.Graph, Meta: meta, Created: time.Now().UTC()}
	if err := s.access(r.Context(), p, t, ActionCreate); err != nil {
		return err
	}
	if _, err := s.cfg.Checkpointer.Get(r.Context(), t.ID, ""); err == nil {
		return errf(http.StatusConflict, "thread-exists", "Thread exists", "thread "+t.ID+" exists already; pick another thread_id")
	} else if !errors.Is(err, runtime.ErrNotFound) {
		return err
	}
	created, err := s.recordThread(r.Context(), t)
	if err != nil {
		return err
	}
	if !created {
		return errf(http.StatusConflict, "thread-exists", "Thread exists", "thread "+t.ID+" exists already; pick another thread_id")
	}
	view, err := s.threadView(r.Context(), t, nil)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/threads/"+t.ID)
	return writeJSON(w, http.StatusCreated, view)
}

// thread finds a thread and checks that p may do a with it.
func (s *Server) thread(ctx context.Context, p Principal, id string, a Action) (threadRecord, error) {
	t, err := s.lookup(ctx, id)
	if errors.Is(err, runtime.ErrNotFound) {
		return threadRecord{}, notFound("no thread " + id)
	}
	if err != nil {
		return threadRecord{}, err
	}
	return t, s.access(ctx, p, t, a)
}

// threadView reads thread t's view; info is its stored record when the
// caller has it fresh (the outcome of its last run), else nil.
func (s *Server) threadView(ctx context.Context, t threadRecord, info *runtime.ThreadInfo) (ThreadView, error) {
	v := ThreadView{ThreadID: t.ID, Graph: t.Graph, Metadata: t.Meta, Created: t.Created, Status: runtime.StatusNew,
		Next: []string{}, Pending: []PendingView{}}
	ts, err := s.state(ctx, t)
	var created time.Time
	switch {
	case errors.Is(err, runtime.ErrNotFound):
	case err != nil:
		return v, err
	default:
		v.CheckpointID, v.Step, v.Values = ts.Checkpoint.ID, ts.Checkpoint.Step, ts.Checkpoint.Channels
		created = ts.Checkpoint.Created
		if ts.Next != nil {
			v.Next = ts.Next
		}
		if ts.Open != nil {
			v.Pending = pendingViews(ts)
		}
		v.Subgraphs = subgraphViews(ts)
		for _, p := range ts.Open {
			if at := p.WakeAt.UTC(); !p.WakeAt.IsZero() && (v.WakeAt == nil || at.Before(*v.WakeAt)) {
				v.WakeAt = &at
			}
		}
	}
	// How the last run ended: the store's record, else the last run this
	// server ran (a run refused before it started ended nothing), unless
	// the store moved on past it.
	var ended checkpoint.ThreadOutcome
	if info != nil {
		ended = info.Outcome
		if l := strings.Fields(info.Meta[metaRuns]); len(l) > 0 {
			v.LastRunID, _, _ = strings.Cut(l[len(l)-1], ":")
		}
	}
	if last := s.lastRun(t.ID); last != nil && !movedOn(info, last) {
		lv := last.view()
		v.LastRunID = lv.RunID
		if last.isDone() && last.refusedWith() == nil && (ended.Status == "" || info == nil || lv.Ended != nil && lv.Ended.After(info.Outcome.Ended)) {
			ended = checkpoint.ThreadOutcome{Status: lv.Status, RunID: lv.RunID}
			if lv.Ended != nil {
				ended.Ended = *lv.Ended
			}
		} else if e := last.ending(); e != "" && !last.isDone() {
			// sent its run_end, not yet freed the thread: the latest run
			ended = checkpoint.ThreadOutcome{Status: e, RunID: lv.RunID}
		}
	}
	v.Status = threadStatus(v, created, ended, s.held(ctx, t, v.LastRunID, info))
	return v, nil
}

// movedOn reports whether thread record info shows that the thread moved
// on past run r of this process, so that the record, not r, says how the
// thread's last run ended: the record lists a run after r, or r began and
// then lost the thread's lease (its end was not written: another run may
// have taken the thread over), or the record's outcome is another run's
// that ended after r began. While the record has nothing newer, r's view
// wins (the record may lag it).
func movedOn(info *runtime.ThreadInfo, r *run) bool {
	if info == nil {
		return false
	}
	runs := strings.Fields(info.Meta[metaRuns])
	for i, e := range runs {
		if id, _, _ := strings.Cut(e, ":"); id == r.id && i < len(runs)-1 {
			return true
		}
	}
	r.mu.Lock()
	began, lost, created := r.runtimeRunID, r.leaseLost, r.created
	r.mu.Unlock()
	o := info.Outcome
	return began != "" && (lost || o.RunID != "" && o.RunID != began && o.Ended.After(created))
}

// held reports whether a run holds thread t right now, as far as this
// server can know: a run of its own, the workers' request it submitted
// (queued or running), a run of another process on the same store whose
// event log has no end yet (runsElsewhere; lastRun is the last run t's
// record lists), or a request of t a worker of Config.Queue holds.
func (s *Server) held(ctx context.Context, t threadRecord, lastRun string, info *runtime.ThreadInfo) bool {
	if _, busy := s.threadBusy(t.ID); busy {
		return true
	}
	if qid, ok := s.queuedID(lastRun); ok {
		if o, err := s.cfg.Queue.Outcome(ctx, qid); err == nil && !o.Ended() {
			return true
		}
	} else if s.runsElsewhere(ctx, t, lastRun, info) {
		return true
	}
	if h, ok := s.cfg.Queue.(ThreadHolder); ok {
		// A request this server did not submit, held by a worker.
		if held, err := h.Holds(ctx, t.ID); err == nil && held {
			return true
		}
	}
	return false
}

// runsElsewhere reports whether run id, the last run thread t's record
// lists, is going on in another process (one that holds the thread's
// lease): this process does not hold it, its stored event log has no
// run_end, and it can still go on (storedRun, Server.lostEnd). A run
// whose thread recorded an outcome after the run began has ended, which
// spares reading its whole log.
func (s *Server) runsElsewhere(ctx context.Context, t threadRecord, id string, info *runtime.ThreadInfo) bool {
	if id == "" || info == nil || s.events == nil {
		return false
	}
	s.mu.Lock()
	_, here := s.runs[id]
	s.mu.Unlock()
	if here {
		return false
	}
	first, err := s.events.ReadEvents(ctx, id, 0, 1)
	if err != nil || len(first) == 0 || first[0].ThreadID != t.ID || !info.Outcome.Ended.Before(first[0].Time) {
		return false
	}
	rv, err := s.storedRun(ctx, t, id, "run")
	return err == nil && rv.Ended == nil
}

// threadStatus is where thread view v stands, by the runtime's one rule
// (checkpoint.ThreadStatus, which the ilmek command applies too): from
// its latest checkpoint (written at created), the interrupts open there,
// how its last run ended (zero when unknown) and whether a run holds it.
func threadStatus(v ThreadView, created time.Time, ended checkpoint.ThreadOutcome, held bool) runtime.Status {
	open := make([]runtime.PendingInterrupt, len(v.Pending))
	for i, p := range v.Pending {
		open[i] = p.PendingInterrupt
	}
	return checkpoint.ThreadStatus(checkpoint.ThreadFacts{Held: held, Checkpoint: v.CheckpointID != "", Next: len(v.Next),
		Created: created, Open: open, Outcome: ended})
}

// state reads a thread's latest state through the version that runs it.
func (s *Server) state(ctx context.Context, t threadRecord) (threadState, error) {
	g, ok := s.graphs[t.Graph]
	if !ok {
		return threadState{}, fmt.Errorf("server: thread %s names graph %q, which is not served", t.ID, t.Graph)
	}
	v, err := g.forThread(ctx, s.cfg.Checkpointer, t.ID)
	if err != nil {
		var ie *runtime.IncompatibleError
		if !errors.As(err, &ie) {
			return threadState{}, err
		}
		v = g.newest()
	}
	return v.thread(ctx, s.cfg.Checkpointer, t.ID)
}

func (s *Server) getThread(w http.ResponseWriter, r *http.Request, p Principal) error {
	t, err := s.thread(r.Context(), p, r.PathValue("thread_id"), ActionRead)
	if err != nil {
		return err
	}
	v, err := s.threadView(r.Context(), t, s.info(r.Context(), t.ID))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// ThreadList is a page of GET /threads.
type ThreadList struct {
	Threads    []ThreadView `json:"threads"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

func (s *Server) listThreads(w http.ResponseWriter, r *http.Request, p Principal) error {
	q := r.URL.Query()
	limit := 50
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 500 {
			return badRequest("limit must be a whole number from 1 to 500")
		}
		limit = n
	}
	status := runtime.Status(q.Get("status"))
	if status != "" && !slices.Contains(threadStatuses, status) {
		return badRequest(fmt.Sprintf("status %q is none of new, running, interrupted, parked, done, error, aborted", status))
	}
	search := strings.ToLower(q.Get("q"))
	var pending *bool
	if v := q.Get("pending"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return badRequest("pending must be true or false")
		}
		pending = &b
	}
	// The store filters and pages: by metadata and graph, and by the last
	// run's outcome for the statuses that imply it (error, aborted:
	// checkpoint.OutcomeFilter). The server checks the rest (Access, the
	// status it computes, pending) on what comes back.
	tq := runtime.ThreadQuery{Meta: map[string]string{}, Cursor: q.Get("cursor"), Status: checkpoint.OutcomeFilter(status)}
	for k, vs := range q {
		if name, ok := strings.CutPrefix(k, "metadata."); ok && len(vs) > 0 {
			if name == "" {
				return badRequest("a metadata filter names no key: send metadata.<key>=<value>")
			}
			tq.Meta[name] = vs[0]
		}
	}
	if graph := q.Get("graph"); graph != "" {
		tq.Meta[metaGraph] = graph
	}
	out := ThreadList{Threads: []ThreadView{}}
	if s.ownerOnly {
		// The default Access hook lets p read its own threads only: the
		// store selects them, so a listing reads what p owns, not every
		// thread the store holds. (A custom hook pages every thread the
		// other filters select and checks each.)
		if o, ok := tq.Meta[metaOwner]; ok && o != p.ID {
			return writeJSON(w, http.StatusOK, out)
		}
		tq.Meta[metaOwner] = p.ID
	}
	for {
		tq.Limit = limit - len(out.Threads)
		page, err := s.records.ListThreads(r.Context(), tq)
		if errors.Is(err, checkpoint.ErrThreadQuery) && tq.Cursor != "" {
			// The other parts of the query were checked above: the store
			// refused the cursor. Its error advises in Go's terms.
			return badRequest(fmt.Sprintf("cursor %q is not one a listing returned (next_cursor); start again without cursor", tq.Cursor))
		}
		if errors.Is(err, checkpoint.ErrThreadQuery) {
			return badRequest("the listing was refused: " + err.Error())
		}
		if err != nil {
			return err
		}
		for _, info := range page.Threads {
			t, ok := record(info)
			if !ok || !metaMatches(info.Meta, tq.Meta) || search != "" && !searchMatches(t, search) {
				continue
			}
			if s.cfg.Access(r.Context(), p, ThreadRef{ID: t.ID, Graph: t.Graph, Meta: t.Meta}, ActionRead) != nil {
				continue
			}
			v, err := s.threadView(r.Context(), t, &info)
			if err != nil {
				return err
			}
			if status != "" && v.Status != status || pending != nil && asksPerson(v.Pending) != *pending {
				continue
			}
			out.Threads = append(out.Threads, v)
		}
		out.NextCursor = page.Next
		if page.Next == "" || len(out.Threads) == limit {
			break
		}
		tq.Cursor = page.Next
	}
	return writeJSON(w, http.StatusOK, out)
}

// asksPerson reports whether pending holds a question to a person (not
// only timers): the threads GET /threads?pending=true lists.
func asksPerson(pending []PendingView) bool {
	for _, p := range pending {
		if !p.Timer {
			return true
		}
	}
	return false
}

// searchMatches reports whether the thread's id or one of its metadata
// values holds q (lower case).
func searchMatches(t threadRecord, q string) bool {
	if strings.Contains(strings.ToLower(t.ID), q) {
		return true
	}
	for k, v := range t.Meta {
		if strings.Contains(strings.ToLower(v), q) || strings.Contains(strings.ToLower(k+"="+v), q) {
			return true
		}
	}
	return false
}

func metaMatches(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// CheckpointView is one checkpoint in a thread's history.
type CheckpointView struct {
	CheckpointID string                     `json:"checkpoint_id"`
	ParentID     string                     `json:"parent_id,omitempty"`
	Step         int                        `json:"step"`
	Created      time.Time                  `json:"created"`
	Values       json.RawMessage            `json:"values"`
	Next         []string                   `json:"next"`
	Pending      []runtime.PendingInterrupt `json:"pending"`
	// Nodes are the nodes of the superstep that wrote the checkpoint,
	// Started when it started (its parent's time) and DurationMS how long
	// it took; Writes are the channels it changed. Empty when the parent
	// is not known (the oldest checkpoint, or a pruned parent).
	Nodes      []string   `json:"nodes"`
	Started    *time.Time `json:"started,omitempty"`
	DurationMS float64    `json:"duration_ms,omitempty"`
	Writes     []string   `json:"writes"`
}

func (s *Server) history(w http.ResponseWriter, r *http.Request, p Principal) error {
	t, err := s.thread(r.Context(), p, r.PathValue("thread_id"), ActionRead)
	if err != nil {
		return err
	}
	limit := 100
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			return badRequest("limit must be a whole number from 1 to 1000")
		}
		limit = n
	}
	cps, err := s.cfg.Checkpointer.List(r.Context(), t.ID, limit)
	if err != nil {
		return err
	}
	out := struct {
		Checkpoints []CheckpointView `json:"checkpoints"`
	}{Checkpoints: []CheckpointView{}}
	byID := make(map[string]*runtime.Checkpoint, len(cps))
	for _, cp := range cps {
		byID[cp.ID] = cp
	}
	for _, cp := range cps {
		cv := checkpointView(cp, byID[cp.ParentID])
		out.Checkpoints = append(out.Checkpoints, cv)
	}
	return writeJSON(w, http.StatusOK, out)
}

type runBody struct {
	Input         json.RawMessage       `json:"input,omitempty"`
	DoubleTexting runtime.DoubleTexting `json:"double_texting,omitempty"`
	// ExpectedCheckpointID, when present, runs the request only if the
	// thread's latest checkpoint is this one ("": the thread has none)
	// when it starts (runtime.WithExpectedLatest); otherwise it is refused
	// 409 thread-moved, having written nothing.
	ExpectedCheckpointID *string `json:"expected_checkpoint_id,omitempty"`
}

// forkBody is a fork's body: input folded into the checkpoint's channels
// (edited channel values), or answers to the interrupts the checkpoint
// waits on (an edited answer), not both.
type forkBody struct {
	runBody
	Answers map[string]json.RawMessage `json:"answers,omitempty"`
}

type resumeBody struct {
	Answers       map[string]json.RawMessage `json:"answers"`
	DoubleTexting runtime.DoubleTexting      `json:"double_texting,omitempty"`
	// ExpectedCheckpointID is the checkpoint whose questions the answers
	// are for (the thread's checkpoint_id when it was read), as runBody's:
	// a resume sent again after its reply was lost is then refused rather
	// than answering the thread's next question.
	ExpectedCheckpointID *string `json:"expected_checkpoint_id,omitempty"`
}

// launchReq is a run, a fork or a resume as its request asked for it.
type launchReq struct {
	kind    string // run, fork or resume
	input   json.RawMessage
	answers map[string]any // a resume's, or a fork's edited answers
	from    string         // a fork's checkpoint
	policy  runtime.DoubleTexting
	expect  *string // expected_checkpoint_id
}

func (s *Server) policy(p runtime.DoubleTexting) (runtime.DoubleTexting, error) {
	if p == "" {
		return s.cfg.DoubleTexting, nil
	}
	if err := p.Validate(); err != nil {
		return "", badRequest("double_texting: " + err.Error())
	}
	return p, nil
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request, p Principal) error {
	var b runBody
	if err := decode(r, &b); err != nil {
		return err
	}
	return s.launch(w, r, p, launchReq{kind: "run", input: b.Input, policy: b.DoubleTexting, expect: b.ExpectedCheckpointID})
}

func (s *Server) fork(w http.ResponseWriter, r *http.Request, p Principal) error {
	var b forkBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if b.ExpectedCheckpointID != nil {
		return badRequest("expected_checkpoint_id does not apply to a fork, which starts from the checkpoint in its path, not the thread's latest; leave it out")
	}
	var answers map[string]any
	if len(b.Answers) > 0 {
		if len(bytes.TrimSpace(b.Input)) > 0 {
			return badRequest("a fork takes input (channel values) or answers (to the checkpoint's interrupts), not both")
		}
		answers = make(map[string]any, len(b.Answers))
		for id, a := range b.Answers {
			answers[id] = a
		}
	}
	return s.launch(w, r, p, launchReq{kind: "fork", input: b.Input, answers: answers, from: r.PathValue("checkpoint_id"), policy: b.DoubleTexting})
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request, p Principal) error {
	var b resumeBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if len(b.Answers) == 0 {
		return badRequest(`answers is empty: send {"answers": {"<interrupt id>": <answer>}} for every open interrupt`)
	}
	answers := make(map[string]any, len(b.Answers))
	for id, a := range b.Answers {
		answers[id] = a
	}
	return s.launch(w, r, p, launchReq{kind: "resume", answers: answers, policy: b.DoubleTexting, expect: b.ExpectedCheckpointID})
}

// launch submits a run, a fork or a resume. When it starts right away the
// response waits for its first event, so that a refusal (a busy thread, a
// wrong answer) is the response's status, and writes nothing: the run is
// listed in its thread's record only once the runtime accepted it (its
// first event; Server.record). A queued request is answered 202 and a
// later refusal ends it with status error.
func (s *Server) launch(w http.ResponseWriter, r *http.Request, p Principal, lr launchReq) error {
	t, err := s.thread(r.Context(), p, r.PathValue("thread_id"), ActionRun)
	if err != nil {
		return err
	}
	policy, err := s.policy(lr.policy)
	if err != nil {
		return err
	}
	lr.policy = policy
	if lr.from != "" {
		if _, err := s.cfg.Checkpointer.Get(r.Context(), t.ID, lr.from); errors.Is(err, runtime.ErrNotFound) {
			return notFound("thread " + t.ID + " has no checkpoint " + lr.from)
		} else if err != nil {
			return err
		}
	}
	if policy == runtime.DoubleTextCancelReplace && lr.kind != "resume" {
		if ts, err := s.state(r.Context(), t); err == nil && len(ts.Open) > 0 {
			return errf(http.StatusConflict, "waiting-on-person", "The thread is waiting on interrupts",
				"thread "+t.ID+" waits on a person; cancel-and-replace does not discard a pause: answer it with POST /threads/"+t.ID+"/resume")
		}
	}
	if s.cfg.Queue != nil {
		return s.submitQueued(w, r, p, t, lr)
	}
	ru := newRun(newID(), t.ID, t.Graph, lr.kind, s.cfg.MaxEventsPerRun)
	ru.input, ru.answers, ru.from, ru.expect = lr.input, lr.answers, lr.from, lr.expect
	now, err := s.submit(ru, policy)
	if err != nil {
		return err
	}
	if now {
		select {
		case <-ru.started:
		case <-r.Context().Done():
			return r.Context().Err()
		}
		if err := ru.refusedWith(); err != nil {
			return err
		}
	}
	w.Header().Set("Location", "/threads/"+t.ID+"/runs/"+ru.id)
	return writeJSON(w, http.StatusAccepted, ru.view())
}

// waitTimeout is the timeout parameter of a wait (default 30s).
func waitTimeout(r *http.Request) (time.Duration, error) {
	t := r.URL.Query().Get("timeout")
	if t == "" {
		return 30 * time.Second, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil || d < 0 || d > 10*time.Minute {
		return 0, badRequest("timeout must be a duration from 0s to 10m, e.g. 30s")
	}
	return d, nil
}

// findRun finds a run of the thread in the path.
func (s *Server) findRun(r *http.Request, p Principal, a Action) (*run, error) {
	t, err := s.thread(r.Context(), p, r.PathValue("thread_id"), a)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("run_id")
	s.mu.Lock()
	ru := s.runs[id]
	s.mu.Unlock()
	if ru == nil || ru.thread != t.ID {
		return nil, notFound("thread " + t.ID + " has no run " + id)
	}
	return ru, nil
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request, p Principal) error {
	if done, err := s.queuedRoute(w, r, p, "get"); done {
		return err
	}
	t, err := s.thread(r.Context(), p, r.PathValue("thread_id"), ActionRead)
	if err != nil {
		return err
	}
	_, v, err := s.anyRun(r.Context(), t, r.PathValue("run_id"), "")
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// waitRun waits for a run's end: one of this process's, or one the
// store's event log holds (polled).
func (s *Server) waitRun(w http.ResponseWriter, r *http.Request, p Principal) error {
	if done, err := s.queuedRoute(w, r, p, "wait"); done {
		return err
	}
	t, err := s.thread(r.Context(), p, r.PathValue("thread_id"), ActionRead)
	if err != nil {
		return err
	}
	timeout, err := waitTimeout(r)
	if err != nil {
		return err
	}
	id := r.PathValue("run_id")
	ru, v, err := s.anyRun(r.Context(), t, id, "")
	if err != nil {
		return err
	}
	tm := time.NewTimer(timeout)
	defer tm.Stop()
	if ru != nil {
		select {
		case <-ru.done:
			return writeJSON(w, http.StatusOK, ru.view())
		case <-tm.C:
			return writeJSON(w, http.StatusAccepted, ru.view())
		case <-r.Context().Done():
			return r.Context().Err()
		}
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for v.Ended == nil {
		select {
		case <-tick.C:
		case <-tm.C:
			return writeJSON(w, http.StatusAccepted, v)
		case <-r.Context().Done():
			return r.Context().Err()
		}
		if v, err = s.storedRun(r.Context(), t, id, v.Kind); err != nil {
			return err
		}
	}
	return writeJSON(w, http.StatusOK, v)
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request, p Principal) error {
	if done, err := s.queuedRoute(w, r, p, "cancel"); done {
		return err
	}
	ru, err := s.findRun(r, p, ActionRun)
	if isNotFound(err) {
		// A run of another process, or of one before a restart: an ended
		// one answers its view; a going one is not this server's to stop.
		t, terr := s.thread(r.Context(), p, r.PathValue("thread_id"), ActionRun)
		if terr != nil {
			return terr
		}
		v, serr := s.storedRun(r.Context(), t, r.PathValue("run_id"), "")
		if serr != nil {
			return serr
		}
		if v.Ended != nil {
			return writeJSON(w, http.StatusAccepted, v)
		}
		return errf(http.StatusConflict, "run-elsewhere", "The run is another process's",
			"run "+v.RunID+" runs in another process (it holds the thread's lease); cancel it through that process: its server's POST .../cancel, or its own command")
	}
	if err != nil {
		return err
	}
	mode := r.URL.Query().Get("mode")
	switch mode {
	case "", "stop", "abort":
	default:
		return badRequest(`mode must be "stop" (at the next superstep boundary, the default) or "abort" (now, voiding the superstep in flight)`)
	}
	s.mu.Lock()
	if q := s.queues[ru.thread]; q != nil {
		for i, queued := range q.queue {
			if queued == ru {
				q.queue = append(q.queue[:i:i], q.queue[i+1:]...)
				s.mu.Unlock()
				s.finish(ru, runtime.StatusAborted, "cancelled before it started", nil)
				return writeJSON(w, http.StatusAccepted, ru.view())
			}
		}
	}
	s.mu.Unlock()
	if !ru.isDone() {
		ru.requestStop()
		if mode == "abort" {
			ru.mu.Lock()
			cancel := ru.cancel
			ru.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	}
	return writeJSON(w, http.StatusAccepted, ru.view())
}

// streamRun writes a run's events as Server-Sent Events with ids
// "<run id>:<seq>", from the event log after Last-Event-ID (header, or the
// last_event_id parameter), then live until the run ends. A run this
// process does not know (it ran in another one, or before a restart) is
// read from the store's event log, polled until its end. The parameter
// subgraphs=exclude leaves out the events of subgraphs (those whose ns is
// not empty); the ids of the events sent stay those of the log.
func (s *Server) streamRun(w http.ResponseWriter, r *http.Request, p Principal) error {
	if done, err := s.queuedRoute(w, r, p, "stream"); done {
		return err
	}
	ru, err := s.findRun(r, p, ActionRead)
	var (
		runID   string
		t       threadRecord
		started time.Time // when a stored run began
	)
	switch {
	case err == nil:
		runID = ru.id
	case s.events != nil && isNotFound(err):
		var terr error
		if t, terr = s.thread(r.Context(), p, r.PathValue("thread_id"), ActionRead); terr != nil {
			return terr
		}
		runID = r.PathValue("run_id")
		first, rerr := s.events.ReadEvents(r.Context(), runID, 0, 1)
		if rerr != nil {
			return rerr
		}
		if len(first) == 0 || first[0].ThreadID != t.ID {
			return err
		}
		started = first[0].Time
	default:
		return err
	}
	excludeChildren, err := subgraphsParam(r)
	if err != nil {
		return err
	}
	closeStream, err := s.openStream(w, runID)
	if err != nil {
		return err
	}
	defer closeStream()
	var after int64
	if last := lastEventID(r); last != "" {
		rid, seq, ok := strings.Cut(last, ":")
		n, err := strconv.ParseInt(seq, 10, 64)
		if !ok || rid != runID || err != nil || n < 0 {
			return badRequest("Last-Event-ID " + last + " is not an id of this run's events (" + runID + ":<seq>)")
		}
		after = n
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		return errors.New("server: the response writer cannot flush; SSE needs it")
	}
	sseHeaders(w)
	fl.Flush()
	heartbeat := time.NewTicker(15 * time.Second)
	defer heartbeat.Stop()
	var poll <-chan time.Time
	var checked time.Time // when a stored run was last checked for a lost end
	if ru == nil {
		tk := time.NewTicker(250 * time.Millisecond)
		defer tk.Stop()
		poll = tk.C
	}
	for {
		var (
			changed <-chan struct{}
			done    bool
			evs     []checkpoint.StoredEvent
		)
		if ru != nil {
			changed, done = ru.changed(), ru.isDone()
			evs = ru.readLog(after, 256)
		} else if evs, err = s.events.ReadEvents(r.Context(), runID, after, 256); err != nil {
			s.log.Error("server: reading a run's events failed", "run", runID, "err", err)
			return nil
		}
		for _, ev := range evs {
			after = ev.Seq
			if excludeChildren && childEvent(ev.Data) {
				continue
			}
			fmt.Fprintf(w, "id: %s:%d\nevent: %s\ndata: %s\n\n", runID, ev.Seq, ev.Kind, ev.Data)
			if ev.Kind == string(runtime.EventRunEnd) {
				fl.Flush()
				return nil
			}
		}
		fl.Flush()
		if len(evs) == 256 {
			continue
		}
		if done && len(evs) == 0 {
			// The bounded log lost the end; stop.
			return nil
		}
		if ru == nil && len(evs) == 0 && time.Since(checked) >= time.Second {
			// A stored run that can go on nowhere (its process ended: no
			// run holds the thread's lease) gets no run_end: send the end
			// its view reads (Server.lostEnd), after the last event.
			checked = time.Now()
			if _, ok := s.lostEnd(r.Context(), t, runID, started); ok {
				v, err := s.storedRun(r.Context(), t, runID, "")
				if err != nil {
					s.log.Error("server: reading a run's events failed", "run", runID, "err", err)
					return nil
				}
				if v.Ended != nil && v.LastSeq <= after {
					writeLostEnd(w, v, after)
					fl.Flush()
					return nil
				}
				continue
			}
		}
		select {
		case <-changed:
		case <-poll:
		case <-heartbeat.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			fl.Flush()
		case <-r.Context().Done():
			return nil
		}
	}
}

// writeLostEnd writes the run_end a stored run's log lacks (v is its view,
// ended by Server.lostEnd), after the last event the stream sent or its
// client named (after): the dead process may have streamed events it never
// stored, so the end's id must pass every id a client saw, not only the
// stored log's.
func writeLostEnd(w http.ResponseWriter, v RunView, after int64) {
	seq := max(v.LastSeq, after) + 1
	ev := runtime.Event{Type: runtime.EventRunEnd, RunID: v.RunID, ThreadID: v.ThreadID, Seq: seq, Time: *v.Ended, Status: v.Status, Error: v.Error}
	data, _ := json.Marshal(ev) // an Event of strings and times marshals
	fmt.Fprintf(w, "id: %s:%d\nevent: %s\ndata: %s\n\n", v.RunID, seq, ev.Type, data)
}

// subgraphsParam reads the stream's subgraphs parameter: true for
// "exclude", false for "include" or none.
func subgraphsParam(r *http.Request) (exclude bool, err error) {
	switch v := r.URL.Query().Get("subgraphs"); v {
	case "", "include":
		return false, nil
	case "exclude":
		return true, nil
	default:
		return false, badRequest("subgraphs=" + v + ": want include or exclude")
	}
}

// childEvent reports whether an event's JSON is a subgraph's: its ns is
// not empty.
func childEvent(data []byte) bool {
	var ev struct {
		NS []string `json:"ns"`
	}
	return json.Unmarshal(data, &ev) == nil && len(ev.NS) > 0
}

// lastEventID is the Last-Event-ID header, or the last_event_id parameter
// for clients that cannot set it.
func lastEventID(r *http.Request) string {
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		return last
	}
	return r.URL.Query().Get("last_event_id")
}

// sseHeaders starts an event stream.
func sseHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n\n")
}

func isNotFound(err error) bool {
	var he *httpError
	return errors.As(err, &he) && he.status == http.StatusNotFound
}
