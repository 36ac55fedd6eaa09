package a2a

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/internal/resent"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// JSON-RPC error codes a Server answers with.
const (
	// CodeInvalidParams is a message/send whose message has no text, or
	// whose answers do not fit the pending interrupts.
	CodeInvalidParams = -32602
	// CodeMethodNotFound is a method the Server does not serve.
	CodeMethodNotFound = -32601
	// CodeTaskNotFound is tasks/get of a task the Server does not know.
	CodeTaskNotFound = -32001
)

// ServeConfig says how a graph is served as an agent (Serve).
type ServeConfig[S, U any] struct {
	// Card is the agent card; an empty Name takes the graph's name, an
	// empty Description a sentence naming it, and the protocol version,
	// transport, modes and one "chat" skill are filled in. The URL is set
	// by the HTTP handler that serves it (a2ahttp.Handler).
	Card AgentCard
	// Input turns the text of a message that starts a run into the run's
	// input. Required.
	Input func(text string) (U, error)
	// Output is the reply text of a run that ended (the task's artifact).
	// Required.
	Output func(state S) string
	// NewID mints context ids, and the ids of messages and artifacts
	// (default: 16 random hex digits). A task's id is an id of NewID, a
	// dot, and its context id in unpadded base64url, so that tasks/get
	// finds the task's thread in a process that did not answer it. A
	// message with an id that names no context gets a context id derived
	// from its message id instead ("m-" and 32 hex digits), the same each
	// time it is sent, so that the message sent again after a restart
	// finds its thread.
	NewID func() string
	// MaxTasks bounds the task records the Server keeps in memory for
	// tasks/get and for the task id of a paused context, and the answers
	// it keeps for messages sent again under their ids (default
	// DefaultMaxTasks; negative is refused). Past it, the record written
	// longest ago goes first. On a checkpointer that keeps thread records
	// (MetaTask) a task whose record went is read again from its thread
	// while it is its context's latest task, as after a restart; on one
	// that does not, tasks/get of it answers CodeTaskNotFound and a paused
	// context whose record went continues under a new task id. The
	// threads themselves live in the checkpointer and lose nothing.
	MaxTasks int
}

// DefaultMaxTasks is ServeConfig.MaxTasks when it is 0.
const DefaultMaxTasks = 10000

// Server is a graph served as an A2A agent: message/send starts a thread
// (the A2A context is the thread's id) or continues it, and answers with
// a task. A run that pauses answers input-required, its status message
// listing the pending interrupts as text and as a data part
// {"pending": [{id, payload, actions?}]}; the next message on that context
// answers them: a text equal to an action's label answers with that
// action's value, other text with itself (as JSON when the interrupt
// expects no string and the text is JSON), and a data part
// {"answers": {id: value}} answers several by id. A run or a resume the
// runtime refuses before it starts (the thread busy with another run, a
// failing store, an answer that does not fit) is a JSON-RPC error, not a
// task: nothing ran, and the caller may send again. A message sent again
// under its id, on its context and with its parts, is answered without
// running the graph again: as it was the first time for the last MaxTasks
// messages, which this process keeps in memory; beyond them (a restart,
// another replica) from the thread's record, when the checkpointer keeps
// thread records (MetaMessage): where the thread stands is the answer,
// and a run the message started that a dead process cut short is
// continued, not started again. The same id with other parts is
// CodeInvalidParams. The run of a message with an id goes on to its end
// when its caller goes away (a dropped connection), so that the message
// sent again finds its answer. tasks/get returns where a task stands: a
// task that ended as its record says, and an open one (working on a
// timer, input-required) as its thread says now, under the same id, so
// that a thread a waker woke, or a person answered through the server's
// API or the ilmek command, shows how it went on; the next message on
// its context is then a task of its own. On a checkpointer that keeps
// thread records, each run records its task's id in its thread's record
// (MetaTask), so that a process that did not answer a task (a restart,
// another replica) reads it from its thread while it is its context's
// latest task, and continues it under its id when the next message
// answers it; an earlier task of the context is then CodeTaskNotFound.
// A Server is a Transport too, so a graph can call it in-process;
// a2ahttp.Handler serves it over HTTP.
type Server struct {
	card AgentCard
	run  func(ctx context.Context, contextID, text string, answers map[string]json.RawMessage, m sent) (*Task, error)
	mint func() string
	// standAt reads where a context's thread stands, changing nothing,
	// given how its last run ended (its record's outcome; serve_get.go).
	standAt func(ctx context.Context, contextID string, outcome checkpoint.ThreadOutcome) (standing, error)
	// readRecord reads a context's thread record (nil when it has none);
	// nil when the checkpointer keeps no thread records (serve_recall.go).
	readRecord func(ctx context.Context, contextID string) (*checkpoint.ThreadInfo, error)

	mu    sync.Mutex
	tasks map[string]*Task  // by task id: the last state recorded
	open  map[string]string // context id -> the task of its paused run
	// order holds the task records in the order they were written, the
	// oldest first, to drop past max; a task written again has an entry
	// for each write, and only its latest (seq) counts.
	order []taskWrite
	seq   map[string]uint64 // task id -> its latest write's number
	next  uint64
	max   int
	// msgs holds what the last max messages with an id answered, by
	// context and message id, and msgOrder the order they came in
	// (serve_messages.go).
	msgs     map[string]*answered
	msgOrder []messageWrite
	// busy counts the messages of each context being answered, whose
	// tasks tasks/get leaves to them (serve_get.go).
	busy map[string]int
}

// taskWrite is one write of a task record: the task and the write's number.
type taskWrite struct {
	id  string
	seq uint64
}

// Serve serves g as an agent whose threads live in cp.
func Serve[S, U any](g *runtime.Graph[S, U], cp runtime.Checkpointer, cfg ServeConfig[S, U]) (*Server, error) {
	if g == nil || cp == nil || cfg.Input == nil || cfg.Output == nil {
		return nil, errors.New("a2a: Serve needs a graph, a checkpointer, ServeConfig.Input and ServeConfig.Output")
	}
	if cfg.MaxTasks < 0 {
		return nil, fmt.Errorf("a2a: ServeConfig.MaxTasks is %d; give a positive bound, or 0 for DefaultMaxTasks (%d)", cfg.MaxTasks, DefaultMaxTasks)
	}
	s := &Server{card: cfg.Card, mint: cfg.NewID, tasks: map[string]*Task{}, open: map[string]string{}, seq: map[string]uint64{}, max: cfg.MaxTasks, msgs: map[string]*answered{}, busy: map[string]int{}}
	if s.max == 0 {
		s.max = DefaultMaxTasks
	}
	if s.mint == nil {
		s.mint = randomID
	}
	name := ""
	if sh := g.Shape(); sh != nil {
		name = sh.Name
	}
	if s.card.Name == "" {
		s.card.Name = name
	}
	if s.card.Description == "" {
		s.card.Description = "The ilmek graph " + s.card.Name + " served as an agent."
	}
	if s.card.ProtocolVersion == "" {
		s.card.ProtocolVersion = ProtocolVersion
	}
	if s.card.PreferredTransport == "" {
		s.card.PreferredTransport = "JSONRPC"
	}
	if s.card.Capabilities == nil {
		s.card.Capabilities = &Capabilities{}
	}
	if s.card.DefaultInputModes == nil {
		s.card.DefaultInputModes = []string{"text/plain"}
	}
	if s.card.DefaultOutputModes == nil {
		s.card.DefaultOutputModes = []string{"text/plain"}
	}
	if s.card.Skills == nil {
		s.card.Skills = []AgentSkill{{ID: "chat", Name: s.card.Name, Description: s.card.Description, Tags: []string{"chat"}}}
	}
	rec, _ := cp.(threadRecords)
	if rec != nil {
		s.readRecord = func(ctx context.Context, contextID string) (*checkpoint.ThreadInfo, error) {
			_, info, err := resent.Read(ctx, cp, contextID)
			return info, err
		}
	}
	s.standAt = func(ctx context.Context, contextID string, outcome checkpoint.ThreadOutcome) (standing, error) {
		res, _, err := resent.Stand(ctx, g.Thread(cp, contextID), outcome)
		if err != nil {
			return standing{}, err
		}
		return standing{res.Status, res.Pending, res.Err, func() string { return cfg.Output(res.State) }}, nil
	}
	s.run = func(ctx context.Context, contextID, text string, answers map[string]json.RawMessage, m sent) (*Task, error) {
		s.enter(contextID)
		defer s.leave(contextID)
		th := g.Thread(cp, contextID)
		var opts []runtime.RunOption
		var meta map[string]string // what the run records in the thread's record
		if rec != nil {
			meta = map[string]string{}
			if m.id != "" {
				// A message taken before is answered from where its
				// thread stands; a new one's id rides with its run's
				// first checkpoint (serve_taken.go).
				latest, info, err := takenBefore(ctx, cp, contextID, m)
				if err != nil {
					return nil, err
				}
				if info != nil {
					return answerAgain(ctx, s, th, info, cfg.Output)
				}
				meta[MetaMessage], meta[MetaDigest] = m.id, m.digest
				opts = append(opts, runtime.WithExpectedLatest(latest))
			}
		}
		// taskOpts are opts with the run's task recorded in the thread's
		// record, so that the task outlives this process (serve_recall.go).
		taskOpts := func(taskID string) []runtime.RunOption {
			if meta == nil {
				return opts
			}
			meta[MetaTask] = taskID
			return append(opts, runtime.WithThreadMeta(meta))
		}
		pending, err := th.Pending(ctx)
		if err != nil {
			return nil, err
		}
		if len(pending) > 0 {
			// The thread waits: its task may be one this process does
			// not hold (a restart), which this message continues.
			if err := s.recallOpen(ctx, contextID); err != nil {
				return nil, err
			}
		}
		var open []runtime.PendingInterrupt
		for _, p := range pending {
			if !p.Timer {
				open = append(open, p)
			}
		}
		var res runtime.Result[S]
		var taskID string
		if len(open) > 0 {
			a, err := answersFor(open, text, answers)
			if err != nil {
				return nil, err
			}
			taskID = s.taskFor(contextID)
			res, err = th.Resume(ctx, a, taskOpts(taskID)...)
			if err != nil && res.Status == "" {
				return nil, refused(err)
			}
		} else {
			// A task this context left open that its thread has left
			// since (answered, or woken, without a message here) is
			// settled first: this run is a task of its own.
			if err := s.settle(ctx, contextID); err != nil {
				return nil, err
			}
			in, err := cfg.Input(text)
			if err != nil {
				return nil, &RPCError{Method: "message/send", Code: CodeInvalidParams, Message: err.Error()}
			}
			// A run the runtime refuses before it starts (the thread
			// busy with another run, a failing store) ran nothing: an
			// error for the caller to retry, as a refused resume is, not
			// a failed task for it to keep.
			taskID = s.taskFor(contextID)
			res, err = th.Invoke(ctx, in, taskOpts(taskID)...)
			if err != nil && res.Status == "" {
				return nil, refused(err)
			}
		}
		return s.taskOf(taskID, contextID, res.Status, res.Pending, res.Err, func() string { return cfg.Output(res.State) }), nil
	}
	return s, nil
}

// refused is the error a message/send answers for a run the runtime
// refused before it started: a *runtime.ResumeError (an answer that does
// not fit the pending interrupts) is CodeInvalidParams, with its message;
// anything else (the thread busy, a failing store) stays as it is, an
// internal error.
func refused(err error) error {
	var re *runtime.ResumeError
	if errors.As(err, &re) {
		return &RPCError{Method: "message/send", Code: CodeInvalidParams, Message: err.Error()}
	}
	return err
}

// Card is the served agent card.
func (s *Server) Card() AgentCard { return s.card }

// AgentCard returns the card (the Transport call).
func (s *Server) AgentCard(context.Context) (*AgentCard, error) {
	c := s.card
	return &c, nil
}

// Post answers one JSON-RPC request: message/send and tasks/get. A
// failure of the protocol is a JSON-RPC error in the response; Post
// returns an error only when the request cannot be read.
func (s *Server) Post(ctx context.Context, r *Request) (*Response, error) {
	if r == nil {
		return nil, errors.New("a2a: Post of no request")
	}
	id, _ := json.Marshal(r.ID)
	resp := &Response{JSONRPC: "2.0", ID: id}
	fail := func(code int, msg string) (*Response, error) {
		resp.Error = &ErrorObject{Code: code, Message: msg}
		return resp, nil
	}
	params, err := json.Marshal(r.Params)
	if err != nil {
		return fail(CodeInvalidParams, "the params do not encode: "+err.Error())
	}
	var t *Task
	switch r.Method {
	case "message/send":
		var p struct {
			Message Message `json:"message"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return fail(CodeInvalidParams, "params.message is not a message: "+err.Error())
		}
		t, err = s.send(ctx, p.Message)
	case "tasks/get":
		var p struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return fail(CodeInvalidParams, "params.id is not a task id: "+err.Error())
		}
		t, err = s.getTask(ctx, p.ID)
	default:
		return fail(CodeMethodNotFound, fmt.Sprintf("method %q is not served; use message/send or tasks/get", r.Method))
	}
	if err != nil {
		var re *RPCError
		if errors.As(err, &re) {
			return fail(re.Code, re.Message)
		}
		return fail(-32603, err.Error())
	}
	resp.Result, err = json.Marshal(t)
	return resp, err
}

// send handles one message/send.
func (s *Server) send(ctx context.Context, m Message) (*Task, error) {
	text := TextOf(m.Parts)
	var answers map[string]json.RawMessage
	for _, p := range m.Parts {
		if p.Kind != "data" {
			continue
		}
		var d struct {
			Answers map[string]json.RawMessage `json:"answers"`
		}
		if json.Unmarshal(p.Data, &d) == nil && d.Answers != nil {
			answers = d.Answers
			break
		}
	}
	if text == "" && answers == nil {
		return nil, &RPCError{Method: "message/send", Code: CodeInvalidParams, Message: "the message has no text and no data part {\"answers\": {...}}; send the text to the agent"}
	}
	take := func(ctx context.Context, msg sent) (*Task, error) {
		contextID := m.ContextID
		switch {
		case contextID != "":
		case msg.id != "":
			contextID = contextFor(msg.id)
		default:
			contextID = s.mint()
		}
		return s.run(ctx, contextID, text, answers, msg)
	}
	if m.MessageID == "" {
		return take(ctx, sent{})
	}
	return s.sendOnce(ctx, m, take)
}

// taskOf records task taskID of thread contextID as its run ended.
func (s *Server) taskOf(taskID, contextID string, status runtime.Status, pending []runtime.PendingInterrupt, runErr error, output func() string) *Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.record(taskID, contextID, standing{status, pending, runErr, output})
}

// record records task taskID of thread contextID as st says it stands,
// keeps it open for the context's next message when it waits (working,
// input-required) and returns it. It is called with s.mu held.
func (s *Server) record(taskID, contextID string, st standing) *Task {
	t := s.taskAt(taskID, contextID, st)
	delete(s.open, contextID)
	if waits(t.Status.State) {
		s.open[contextID] = taskID
	}
	s.keep(t)
	return t
}

// taskAt is task taskID of thread contextID as st says it stands, its
// messages and artifact under new ids. It is called with s.mu held.
func (s *Server) taskAt(taskID, contextID string, st standing) *Task {
	t := &Task{Kind: "task", ID: taskID, ContextID: contextID, Status: TaskStatus{State: stateOf(st.status), Timestamp: time.Now().UTC().Format(time.RFC3339Nano)}}
	agentMsg := func(parts ...Part) *Message {
		return &Message{Kind: "message", MessageID: s.mint(), Role: "agent", TaskID: taskID, ContextID: contextID, Parts: parts}
	}
	switch t.Status.State {
	case "completed":
		t.Artifacts = []Artifact{{ArtifactID: s.mint(), Name: "reply", Parts: []Part{TextPart(st.output())}}}
	case "input-required", "working":
		text, data := PendingParts(st.pending)
		t.Status.Message = agentMsg(TextPart(text), Part{Kind: "data", Data: data})
	case "canceled":
		t.Status.Message = agentMsg(TextPart(errText(st.err, "the run was aborted")))
	default:
		t.Status.Message = agentMsg(TextPart(errText(st.err, "the run failed")))
	}
	return t
}

// waits reports whether a task in A2A state state waits for a timer or
// an answer.
func waits(state string) bool { return state == "input-required" || state == "working" }

// stateOf is the A2A task state of a run that ended with status.
func stateOf(status runtime.Status) string {
	switch status {
	case runtime.StatusDone:
		return "completed"
	case runtime.StatusInterrupted:
		return "input-required"
	case runtime.StatusParked, runtime.StatusRunning:
		return "working"
	case runtime.StatusAborted:
		return "canceled"
	}
	return "failed"
}

// keep records t, the latest state of its task, and drops the records
// written longest ago past s.max. Each write costs O(1), amortized.
func (s *Server) keep(t *Task) {
	s.next++
	s.tasks[t.ID], s.seq[t.ID] = t, s.next
	s.order = append(s.order, taskWrite{t.ID, s.next})
	for len(s.tasks) > s.max {
		w := s.order[0]
		s.order[0] = taskWrite{}
		s.order = s.order[1:]
		if s.seq[w.id] != w.seq {
			continue // written again since: a later entry is its latest
		}
		if c := s.tasks[w.id].ContextID; s.open[c] == w.id {
			delete(s.open, c)
		}
		delete(s.tasks, w.id)
		delete(s.seq, w.id)
	}
	// Entries of tasks written again pile up: keep the live ones.
	s.order = shed(s.order, s.max, len(s.tasks), func(w taskWrite) bool { return s.seq[w.id] == w.seq })
}

// shed returns order, or when it holds more than twice bound entries (most
// of them of records written again or forgotten since), a new slice of
// its n entries for which live holds, in their order: what keeps a
// bounded record's order O(1) a write, amortized.
func shed[T any](order []T, bound, n int, live func(T) bool) []T {
	if len(order) <= 2*bound {
		return order
	}
	kept := make([]T, 0, n)
	for _, w := range order {
		if live(w) {
			kept = append(kept, w)
		}
	}
	return kept
}

func errText(err error, def string) string {
	if err == nil {
		return def
	}
	return err.Error()
}

// pendingItem is one entry of the data part {"pending": [...]}.
type pendingItem struct {
	ID      string           `json:"id"`
	Payload json.RawMessage  `json:"payload"`
	Actions []runtime.Action `json:"actions,omitempty"`
}

// PendingParts is how an agent serving a graph lists the interrupts it
// waits on: the text ("The agent needs input before it can continue:"
// and a line per interrupt, `- interrupt "<id>": <payload JSON>`, ending
// " — options: A, B" when it offers actions) and the data part
// {"pending": [{id, payload, actions?}]}, as the reference writes them.
func PendingParts(pending []runtime.PendingInterrupt) (string, json.RawMessage) {
	var b strings.Builder
	b.WriteString("The agent needs input before it can continue:")
	items := make([]pendingItem, 0, len(pending))
	for _, p := range pending {
		payload := p.Payload
		if len(payload) == 0 {
			payload = json.RawMessage("null")
		}
		items = append(items, pendingItem{ID: p.ID, Payload: payload, Actions: p.Actions})
		id, _ := json.Marshal(p.ID)
		fmt.Fprintf(&b, "\n- interrupt %s: %s", id, compact(payload))
		if len(p.Actions) > 0 {
			labels := make([]string, len(p.Actions))
			for i, a := range p.Actions {
				labels[i] = a.Label
			}
			b.WriteString(" — options: " + strings.Join(labels, ", "))
		}
	}
	data, _ := json.Marshal(map[string]any{"pending": items})
	return b.String(), data
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// answersFor turns a message into the answers of the open interrupts.
func answersFor(open []runtime.PendingInterrupt, text string, byID map[string]json.RawMessage) (runtime.Answers, error) {
	if byID != nil {
		m := make(map[string]any, len(byID))
		for id, v := range byID {
			m[id] = v
		}
		return runtime.AnswersByID(m), nil
	}
	if len(open) != 1 {
		ids := make([]string, len(open))
		for i, p := range open {
			ids[i] = p.ID
		}
		return runtime.Answers{}, &RPCError{Method: "message/send", Code: CodeInvalidParams,
			Message: fmt.Sprintf("the agent waits on %d interrupts (%s); answer them by id in a data part {\"answers\": {...}}", len(open), strings.Join(ids, ", "))}
	}
	p := open[0]
	if v, ok := runtime.AnswerFor(p, text); ok {
		return runtime.Answer(v), nil
	}
	if p.Expects != nil && p.Expects.Type != "string" && json.Valid([]byte(text)) {
		return runtime.Answer(json.RawMessage(text)), nil
	}
	return runtime.Answer(text), nil
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
