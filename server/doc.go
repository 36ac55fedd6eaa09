// Package server serves ilmek graphs over HTTP: an http.Handler you mount
// in your own binary (your nodes are Go code) over a set of graphs —
// spec-built, code-built or generated, several versions of one document
// with Versions — and a checkpointer.
//
// Resources:
//
//   - threads: POST /threads creates one (of a graph, with string
//     metadata); GET /threads lists them with filters (graph, status,
//     pending, metadata.<key>, q: a search of ids and metadata) and cursor
//     paging; GET /threads/{id} is its state, what runs next and the
//     interrupts it waits on (an interrupt asked inside a subgraph with
//     the path to its child and the node there, PendingView), and where
//     each child of a paused thread stands (SubgraphView: its channels,
//     next nodes and pending ids); DELETE /threads/{id} deletes it. A thread's
//     status is the runtime's (runtime.Status): new, running, interrupted,
//     parked, done, error or aborted, by the rule checkpoint.ThreadStatus
//     states, which the ilmek command applies too;
//   - runs: POST /threads/{id}/runs starts one with input; its events
//     stream as Server-Sent Events (GET .../runs/{run}/stream, ids
//     "<run>:<seq>", reconnect with Last-Event-ID from the run's event
//     log); GET .../wait waits for the outcome; POST .../cancel cancels it
//     (a run another process holds is cancelled there: 409 here);
//     GET /threads/{id}/runs lists the thread's latest runs. A run's
//     lookup and wait read the store's event log for a run this process
//     does not hold (before a restart, or in another process); one whose
//     log has no run_end runs while a process holds the thread's lease,
//     and once none does (its process ended, its lease expired) it reads
//     ended aborted: its stream ends with a run_end, its cancel answers
//     its view, and POST /threads/{id}/runs {} continues the thread;
//   - resume: POST /threads/{id}/resume answers interrupts by id; the
//     runtime's refusals become precise statuses with RFC 9457 problem
//     bodies (a wrong answer type 422, a busy thread 409...). A run or
//     resume whose body names expected_checkpoint_id runs only on the
//     thread at that checkpoint (runtime.WithExpectedLatest), else 409
//     thread-moved: a resume sent again after its reply was lost does not
//     answer the thread's next question;
//   - history: GET /threads/{id}/history lists checkpoints (each with the
//     nodes, start, duration and channel writes of the superstep that
//     wrote it), GET .../history/{checkpoint} is the state at one, and
//     POST .../history/{checkpoint}/fork runs from one with edited channel
//     values (input) or an edited answer (answers);
//   - GET /threads/{id}/diagram draws the graph with where the thread
//     stands: the MODEL.md §9.1 Mermaid text (package mermaid), DOT
//     (package dot), or SVG laid out by Config.RenderSVG (package graphviz
//     runs Graphviz in process; without a renderer format=svg answers 501);
//     subgraphs=expand draws each subgraph's child inside its node (a
//     Mermaid subgraph block, a DOT cluster) with where the child stands
//     marked, subgraphs=collapse (the default) a box as §9.1 draws it;
//   - schedules: GET and POST /schedules list and create the store's
//     schedules (checkpoint.ScheduleStore: a graph run at each tick of a
//     cron expression in a time zone or of an interval), GET and DELETE
//     /schedules/{name} read (with the latest firings) and delete one,
//     POST /schedules/{name}/pause and /resume pause and resume it. The
//     Access hook is asked ActionSchedule (OwnerOnly refuses it). The
//     PostgreSQL workers fire the schedules; with the memory or SQLite
//     store, a runtime/waker with WithStoredSchedules in the server's
//     process does;
//   - GET /openapi.json is the API's OpenAPI 3.1 document (OpenAPI);
//   - /inbox/ is the console, a page for people served from embedded
//     files (no CDN, a strict Content-Security-Policy): threads of every
//     status with filters, a search by id or metadata and paging; a page
//     per thread at its own URL (/inbox/?thread=ID, &cp=CHECKPOINT for an
//     earlier state) with its status, the diagram (SVG from
//     Config.RenderSVG, the Mermaid text without one; subgraphs expanded)
//     marking the path taken and where it stands, inside its children too,
//     where each child stands, the questions it waits on (one asked inside
//     a child named by its path, in the list too), the timeline
//     of its supersteps (nodes, start, duration, channels written), the
//     channel values at any checkpoint, its runs, and their events live.
//     An answer form shows the question as text and a field per member of
//     the answer, labelled by the `title:"..."` and `description:"..."`
//     struct tags of the Interrupt[T] type (a JSON box starting from a
//     skeleton of the schema when the answer nests); it is updated in
//     place, never rebuilt while someone types, checks the answer against
//     the schema before sending it, and confirms what the run then did.
//     Cancel a run, fork from a checkpoint with an edited answer or edited
//     channel values, and delete a thread are buttons behind a
//     confirmation, through the routes above (and so the Access hook).
//
// Threads and the runs' events live in the checkpointer when it keeps them
// (checkpoint.ThreadLister and ThreadRecorder for threads, with the graph,
// creation time and id in reserved "ilmek.*" metadata keys; checkpoint.EventStore
// for events, written once per superstep): a restarted server, or another
// one on the same store, finds the threads and streams the runs' events.
// A checkpointer without thread records gets them in memory for the
// server's life; without an event log, a run's events are kept with the
// run in memory only, bounded (Config.MaxRuns, MaxEventsPerRun).
//
// The server depends on interfaces, not on drivers: with Config.Queue
// (a Queue; package server/workersqueue adapts the PostgreSQL run-request
// queue of runtime/postgres/workers) runs and resumes go to a worker pool,
// and the server submits, reads outcomes, waits and cancels; SVG comes
// from the Config.RenderSVG hook. Neither pgx nor Graphviz is compiled
// into a server that does not use them. A Queue that keeps dead requests
// (DeadLetters) has them listed at GET /queue/dead and retried at POST
// /queue/dead/{request_id}/retry; one that tells whether a worker holds
// a thread's request (ThreadHolder) makes the thread read running while
// one does, whoever submitted it.
//
// A request for a thread that has a run queued or running follows the
// double-texting policy it names (double_texting: reject, enqueue or
// cancel-and-replace; Config.DoubleTexting by default, reject). Without
// Config.Queue the policies act within this server process: a run queued
// behind another (enqueue) waits in its memory only, so a crash loses it
// after its 202, and while another server on the same store runs the
// thread, enqueue and cancel-and-replace are refused 409 thread-busy (this
// process can neither queue behind nor stop that run). The PostgreSQL
// workers queue (Config.Queue, package server/workersqueue) keeps queued
// runs durably and applies the policies across servers.
//
// Security defaults: New refuses a Config without an Authenticate hook,
// so nothing is served unauthenticated by accident; every thread records
// the principal that created it and the default Access hook (OwnerOnly)
// lets only that principal see and run it; another principal's thread
// answers 404, as a missing one does, so that ids cannot be probed
// (Config.RevealForbidden answers 403 instead); request bodies are bounded
// (Config.MaxBodyBytes, 1 MiB); event streams are bounded per run and per
// server (Config.MaxStreamsPerRun, 8, and MaxStreams, 1,000; 429 past
// them); diagrams escape node ids and labels and are served with the
// inbox's Content-Security-Policy; no CORS header is sent unless
// Config.CORS lists origins; an error the server does not expect is logged
// with an id and answered 500 with only that id, never its text or a
// stack.
package server
