package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Principal is who a request acts for, as the Authenticate hook found it.
type Principal struct {
	// ID identifies the principal; threads record the ID of the principal
	// that created them (metadata key "owner").
	ID string
	// Claims are whatever else the hook knows (roles, tenant...), for the
	// Access hook.
	Claims map[string]string
}

// Action is what a request does with a thread, for the Access hook.
type Action string

// The actions the Access hook is asked about.
const (
	ActionRead   Action = "read"   // get, list, history, events, diagram
	ActionCreate Action = "create" // create a thread
	ActionRun    Action = "run"    // start, resume, fork, cancel runs
	ActionDelete Action = "delete" // delete a thread and everything of it
)

// ThreadRef is the thread an Access check is about.
type ThreadRef struct {
	ID    string
	Graph string
	// Meta is the thread's metadata; Meta["owner"] is the ID of the
	// principal that created it.
	Meta map[string]string
}

// CORS configures cross-origin requests. The server sends no CORS headers
// unless Config.CORS is set.
type CORS struct {
	// AllowedOrigins lists the origins (scheme://host[:port]) allowed to
	// call the API from a browser.
	AllowedOrigins []string
	// AllowCredentials lets those origins send cookies.
	AllowCredentials bool
}

// Config configures a Server.
type Config struct {
	// Graphs are the graphs served, each under its name (Of, Versions).
	Graphs []Graph
	// Checkpointer keeps the threads. Required (with Queue, nil means
	// Queue.Store()). Its thread records and listing
	// (checkpoint.ThreadRecorder, ThreadLister) and its event log
	// (checkpoint.EventStore) are used when it has them; without records the
	// server keeps them in memory, without an event log a run's events
	// live with the run in memory.
	Checkpointer runtime.Checkpointer
	// Authenticate finds the principal of a request, or returns an error
	// (the request is answered 401 and the error is logged, not sent).
	// Required: a server without it serves no route. Use Anonymous only
	// for a server on a trusted loopback interface.
	Authenticate func(*http.Request) (Principal, error)
	// Access decides whether p may do action on thread t; an error refuses
	// it with 404, as for a missing thread (403 with RevealForbidden), and
	// a thread the principal may not read is left out of listings. Nil
	// allows a principal the threads it created (their "owner" metadata
	// is its ID) and nothing else, and lets a listing ask the store for
	// those threads only. A custom hook is asked about every thread a
	// listing's filters select: a listing then pages through the store's
	// threads until it has a page the principal may read, so its cost
	// grows with the store, not with what the principal sees (filter by
	// metadata to keep it small). Access is checked on every thread a
	// listing returns either way.
	Access func(ctx context.Context, p Principal, t ThreadRef, action Action) error
	// MaxBodyBytes bounds request bodies (default 1 MiB); a larger body is
	// answered 413.
	MaxBodyBytes int64
	// CORS, when set, allows the listed origins; nil sends no CORS headers.
	CORS *CORS
	// DoubleTexting is the policy of a request that names none (default
	// reject).
	DoubleTexting runtime.DoubleTexting
	// Logger receives the server's records (internal errors with the id
	// their response carries) and, when set, the runs' own (it is each
	// run's runtime.WithLogger). Default: slog.Default() for the server's
	// records; the runs' are then left to the graph's WithLogger.
	Logger *slog.Logger
	// RunOptions are added to every run (an observer, a recursion limit).
	RunOptions []runtime.RunOption
	// MaxStreamsPerRun bounds the event streams (GET .../stream) open at
	// once on one run (default 8), MaxStreams those open on the server
	// (default 1,000); a stream past either is answered 429 with
	// Retry-After. Each stream holds a goroutine and a connection while
	// its run goes on.
	MaxStreamsPerRun, MaxStreams int
	// RevealForbidden answers 403 for a thread that exists but that the
	// principal may not read or run. By default such a thread answers 404,
	// as a missing one does, so that a principal cannot probe which ids
	// other principals' threads have. (Creating a thread with an id that
	// is taken answers 409 whoever owns it: let the server pick ids where
	// that matters.)
	RevealForbidden bool
	// MaxRuns bounds the runs remembered in memory (default 10,000);
	// MaxEventsPerRun bounds each run's in-memory event log (default
	// 10,000).
	MaxRuns, MaxEventsPerRun int
	// Queue, when set, sends runs and resumes to a run-request queue that
	// a pool of workers drains (package server/workersqueue adapts the
	// PostgreSQL one of runtime/postgres/workers; each worker registers
	// every graph under its name). The server then submits, reads
	// outcomes, waits, cancels and streams the events the workers' runs
	// keep in the store's event log (SSE ids "<worker run id>:<seq>"),
	// and Checkpointer must be the queue's store (nil means
	// Queue.Store()). Queued runs have ids "q-<request id>"; a fork is queued
	// with its checkpoint (QueueRequest.From), and a cancel cancels every
	// request of the thread (and keeps a parked one from being woken).
	Queue Queue
	// QueuePartition names the thread metadata key whose value is the
	// partition (the tenant) of the requests the server submits to Queue
	// (QueueRequest.Partition), whose limits and fair turns apply to them
	// (see runtime/postgres/workers, "Flow control"); "" submits them
	// without one.
	QueuePartition string
	// QueuePriority, when set, gives each request the server submits to
	// Queue its priority (QueueRequest.Priority: higher is claimed first,
	// in order of submission within a priority), decided by the operator
	// from who asks and what: p is the caller, r the request with its
	// graph, thread, kind and partition. Clients cannot raise their own
	// priority; nil submits every request at 0.
	QueuePriority func(ctx context.Context, p Principal, r QueueRequest) int32
	// RenderSVG lays a diagram's DOT text out as SVG for
	// GET /threads/{id}/diagram?format=svg and the inbox, e.g.
	// graphviz.New().SVG (package github.com/ilmek-go/ilmek/graphviz). Nil
	// answers format=svg with 501, and the inbox shows the Mermaid text
	// in the diagram's place.
	RenderSVG func(ctx context.Context, dot string) ([]byte, error)
	// DisableInbox turns the inbox page under /inbox/ off (it is served
	// by default).
	DisableInbox bool
}

// ErrNoAuthenticate is returned by New for a Config without Authenticate:
// the server refuses to serve anything unauthenticated by accident.
var ErrNoAuthenticate = errors.New("server: Config.Authenticate is nil; pass a hook that finds the request's principal (server.Anonymous only on a trusted loopback interface)")

// Anonymous is an Authenticate hook that lets every request in as the
// principal "anonymous". Use it only where every caller is trusted (a
// local development server on 127.0.0.1).
func Anonymous(*http.Request) (Principal, error) { return Principal{ID: "anonymous"}, nil }

// Server is the HTTP API over a set of graphs and a checkpointer, and the
// inbox page. It is an http.Handler; Close stops its runs.
type Server struct {
	cfg     Config
	log     *slog.Logger
	graphs  map[string]Graph
	names   []string
	mux     *http.ServeMux
	records threadStore           // the checkpointer's thread records, or memRecords
	events  checkpoint.EventStore // the checkpointer's event log; nil when it has none
	cache   sync.Map              // thread id -> threadRecord, read from records
	base    context.Context
	stopAll context.CancelFunc
	wg      sync.WaitGroup

	// ownerOnly is set when Config.Access is the default, OwnerOnly: a
	// listing then asks the store for the principal's threads only.
	ownerOnly bool

	noteMu sync.Mutex // orders the writes of a thread record's run list

	mu       sync.Mutex
	queues   map[string]*threadRuns
	runs     map[string]*run
	runOrder []string
	streams  map[string]int // open event streams by run id
	nStreams int            // open event streams in all
	// freeRuns holds the stored runs without a run_end whose thread's
	// lease was found free (Server.leaseFree), heldAt when a thread's
	// lease was last found held by another process.
	freeRuns map[string]bool
	heldAt   map[string]time.Time
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Authenticate == nil {
		return nil, ErrNoAuthenticate
	}
	if cfg.Checkpointer == nil && cfg.Queue != nil {
		cfg.Checkpointer = cfg.Queue.Store()
	}
	if cfg.Checkpointer == nil {
		return nil, errors.New("server: Config.Checkpointer is nil; pass the store threads live in (checkpoint.NewMemory, runtime/sqlite, runtime/postgres)")
	}
	if len(cfg.Graphs) == 0 {
		return nil, errors.New("server: Config.Graphs is empty; pass at least one graph made with server.Of")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.DoubleTexting == "" {
		cfg.DoubleTexting = runtime.DoubleTextReject
	}
	if err := cfg.DoubleTexting.Validate(); err != nil {
		return nil, fmt.Errorf("server: Config.DoubleTexting: %w", err)
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = 10000
	}
	if cfg.MaxEventsPerRun <= 0 {
		cfg.MaxEventsPerRun = 10000
	}
	if cfg.MaxStreamsPerRun <= 0 {
		cfg.MaxStreamsPerRun = 8
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = 1000
	}
	ownerOnly := cfg.Access == nil
	if ownerOnly {
		cfg.Access = OwnerOnly
	}
	s := &Server{cfg: cfg, log: cfg.Logger, graphs: map[string]Graph{}, queues: map[string]*threadRuns{}, runs: map[string]*run{},
		ownerOnly: ownerOnly, streams: map[string]int{}, freeRuns: map[string]bool{}, heldAt: map[string]time.Time{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	for _, g := range cfg.Graphs {
		if g.versions == nil {
			return nil, errors.New("server: a Config.Graphs entry is the zero Graph; make each with server.Of or server.Versions")
		}
		if _, dup := s.graphs[g.name]; dup {
			return nil, fmt.Errorf("server: two Config.Graphs entries are named %q; put versions of one graph in server.Versions", g.name)
		}
		s.graphs[g.name] = g
		s.names = append(s.names, g.name)
	}
	s.bindStore(cfg.Checkpointer)
	s.base, s.stopAll = context.WithCancel(context.Background())
	s.routes()
	return s, nil
}

// OwnerOnly is the default Access hook: a principal may create threads and
// do anything with the threads it created, nothing with others; it
// refuses every schedule route (ActionSchedule).
func OwnerOnly(_ context.Context, p Principal, t ThreadRef, action Action) error {
	if action == ActionSchedule {
		return errors.New("schedules start runs unattended: the server's Access hook must allow them (ActionSchedule)")
	}
	if action == ActionCreate || (t.Meta["owner"] != "" && t.Meta["owner"] == p.ID) {
		return nil
	}
	return errors.New("the thread belongs to another principal")
}

// Close stops every run at its next superstep boundary, cancels them when
// ctx ends first, and waits for them.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	for _, q := range s.queues {
		if q.active != nil {
			q.active.requestStop()
		}
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.stopAll()
		return nil
	case <-ctx.Done():
		s.stopAll()
		<-done
		return ctx.Err()
	}
}

// ServeHTTP serves the API and the inbox.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if c := s.cfg.CORS; c != nil {
		if origin := r.Header.Get("Origin"); origin != "" && allowed(c.AllowedOrigins, origin) {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			if c.AllowCredentials {
				h.Set("Access-Control-Allow-Credentials", "true")
			}
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
				h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, Last-Event-ID")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	s.mux.ServeHTTP(w, r)
}

func allowed(list []string, origin string) bool {
	for _, o := range list {
		if o == origin {
			return true
		}
	}
	return false
}

// handler is an API handler: it returns an error to answer with a problem.
type handler func(w http.ResponseWriter, r *http.Request, p Principal) error

// wrap authenticates the request, bounds its body and maps its error.
func (s *Server) wrap(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.writeProblem(w, r, fmt.Errorf("server: handler panicked: %v", v))
			}
		}()
		p, err := s.cfg.Authenticate(r)
		if err != nil {
			s.log.Info("server: authentication refused", "path", r.URL.Path, "err", err)
			w.Header().Set("WWW-Authenticate", `Bearer realm="ilmek"`)
			s.writeProblem(w, r, errf(http.StatusUnauthorized, "unauthenticated", "Authentication required",
				"the request carries no credentials the server accepts"))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		}
		if err := h(w, r, p); err != nil {
			s.writeProblem(w, r, err)
		}
	})
}

// access runs the Access hook for t.
func (s *Server) access(ctx context.Context, p Principal, t threadRecord, a Action) error {
	if err := s.cfg.Access(ctx, p, ThreadRef{ID: t.ID, Graph: t.Graph, Meta: t.Meta}, a); err != nil {
		s.log.Info("server: access refused", "principal", p.ID, "thread", t.ID, "action", a, "err", err)
		if a != ActionCreate && !s.cfg.RevealForbidden {
			return notFound("no thread " + t.ID)
		}
		return errf(http.StatusForbidden, "forbidden", "Forbidden", "the principal may not "+string(a)+" thread "+t.ID)
	}
	return nil
}

// openStream counts an event stream of run, or refuses it with 429 past
// Config.MaxStreamsPerRun or MaxStreams; the caller calls the returned
// func when the stream ends.
func (s *Server) openStream(w http.ResponseWriter, run string) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.streams[run] >= s.cfg.MaxStreamsPerRun:
		w.Header().Set("Retry-After", "5")
		return nil, errf(http.StatusTooManyRequests, "too-many-streams", "Too many event streams",
			fmt.Sprintf("run %s has %d event streams open, the most the server allows; close one or retry later", run, s.cfg.MaxStreamsPerRun))
	case s.nStreams >= s.cfg.MaxStreams:
		w.Header().Set("Retry-After", "5")
		return nil, errf(http.StatusTooManyRequests, "too-many-streams", "Too many event streams",
			fmt.Sprintf("the server has %d event streams open, the most it allows; retry later", s.cfg.MaxStreams))
	}
	s.streams[run]++
	s.nStreams++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.streams[run]--; s.streams[run] == 0 {
			delete(s.streams, run)
		}
		s.nStreams--
	}, nil
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
