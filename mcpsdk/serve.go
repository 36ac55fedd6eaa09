package mcpsdk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// ResumeSuffix is appended to a graph tool's name to name the tool that
// answers its pauses.
const ResumeSuffix = "__resume"

// GraphTool says how AddGraph exposes a graph as MCP tools.
type GraphTool[S, U any] struct {
	// Name is the tool's name (default: the graph's name); Description
	// what it is for (default: a sentence naming the graph).
	Name, Description string
	// Graph is the graph to run; Store keeps its threads (a pause outlives
	// the call that paused). Both required.
	Graph *runtime.Graph[S, U]
	Store runtime.Checkpointer
	// NewThreadID mints the thread of each call without an idempotency
	// key (default: 16 random hex digits); a call with one runs on a
	// thread named after it ("k-" and 32 hex digits).
	NewThreadID func() string
}

// Outcome is the structured result of a graph tool: the thread the call
// ran, its status (runtime.Status), the state when done, the pending
// interrupts when interrupted, and the error when it failed.
type Outcome[S any] struct {
	Thread  string                     `json:"thread"`
	Status  runtime.Status             `json:"status"`
	State   *S                         `json:"state,omitempty"`
	Pending []runtime.PendingInterrupt `json:"pending,omitempty"`
	Error   string                     `json:"error,omitempty"`
}

// ResumeInput is the input of a graph's resume tool: the thread, and one
// answer (to its only open interrupt; a string equal to an action's label
// answers with that action's value) or answers keyed by interrupt id.
// A call with neither is refused, as is an answer of null (a caller
// cannot tell it from a missing one): a person's answer is never implied.
// Answer null by id (answers) where the interrupt's type takes it.
type ResumeInput struct {
	Thread  string         `json:"thread" jsonschema:"the thread the paused call returned"`
	Answer  any            `json:"answer,omitempty" jsonschema:"the answer to the only open interrupt, or one of its action labels"`
	Answers map[string]any `json:"answers,omitempty" jsonschema:"answers keyed by interrupt id, when several are open"`
}

// AddGraph adds two tools to s: t.Name runs the graph on a new thread with
// the call's arguments as input, and t.Name+ResumeSuffix answers a thread
// that paused. A name MCP does not allow (its rule: 1–128 ASCII letters,
// digits, '_', '-' and '.', the resume tool's name included) is refused,
// and no tool is added: a graph named "Support Desk" needs a GraphTool.Name. The run tool's input schema is the input type's JSON
// Schema for a typed (generated) graph, and an object whose properties
// are the channels for an untyped one (runtime.Values). A run that pauses
// returns its pending interrupts (text and structured) and is answered
// with the resume tool; a run that fails is a tool error. A call with an
// idempotency key in its _meta (mcp.MetaIdempotencyKey) is answered once:
// the run tool runs it on a thread named after the key, and the resume
// tool records the key with the thread (MetaCall; a store without thread
// records answers such a resume as one without a key); the same key again
// gets where the call's thread stands (made while the first call's run
// still runs in this process, it waits for that run's end), and other
// arguments under it are refused.
func AddGraph[S, U any](s *sdk.Server, t GraphTool[S, U]) error {
	if s == nil || t.Graph == nil || t.Store == nil {
		return errors.New("mcpsdk: AddGraph needs a server, GraphTool.Graph and GraphTool.Store")
	}
	name := t.Name
	if name == "" && t.Graph.Shape() != nil {
		name = t.Graph.Shape().Name
	}
	if name == "" {
		return errors.New("mcpsdk: AddGraph: the graph has no name; set GraphTool.Name")
	}
	if err := checkToolName(name, t.Name == ""); err != nil {
		return err
	}
	desc := t.Description
	if desc == "" {
		desc = "Runs the ilmek graph " + name + "."
	}
	mint := t.NewThreadID
	if mint == nil {
		mint = randomID
	}
	run := &sdk.Tool{Name: name, Description: desc}
	flights := &inFlight{}
	if _, untyped := any(new(U)).(*runtime.Values); untyped {
		props := map[string]any{}
		if sh := t.Graph.Shape(); sh != nil {
			for _, c := range sh.Channels {
				props[c.Name] = map[string]any{"description": "channel " + c.Name + " (" + c.Reducer + ")"}
			}
		}
		run.InputSchema = map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	}
	sdk.AddTool(s, run, func(ctx context.Context, req *sdk.CallToolRequest, in U) (*sdk.CallToolResult, any, error) {
		if k, ok := keyOf(name, req); ok {
			// Taken before when the key's thread has a checkpoint.
			th := t.Graph.Thread(t.Store, k.threadOf(name))
			return once(ctx, name, th, t.Store, k, flights, func(latest string, _ *checkpoint.ThreadInfo) bool { return latest != "" },
				func(ctx context.Context, opts ...runtime.RunOption) (runtime.Result[S], error) {
					return th.Invoke(ctx, in, opts...)
				})
		}
		id := mint()
		res, err := t.Graph.Thread(t.Store, id).Invoke(ctx, in)
		return result(name, id, res, err)
	})
	resume := &sdk.Tool{Name: name + ResumeSuffix, Description: "Answers a paused call of " + name + ": the thread it returned, and the answer."}
	sdk.AddTool(s, resume, func(ctx context.Context, req *sdk.CallToolRequest, in ResumeInput) (*sdk.CallToolResult, any, error) {
		th := t.Graph.Thread(t.Store, in.Thread)
		k, keyed := keyOf(resume.Name, req)
		if _, ok := t.Store.(checkpoint.ThreadRecorder); keyed && ok {
			// Taken before when the thread's record names the key.
			return once(ctx, resume.Name, th, t.Store, k, flights, func(_ string, info *checkpoint.ThreadInfo) bool { return info != nil && info.Meta[MetaCall] == k.key },
				func(ctx context.Context, opts ...runtime.RunOption) (runtime.Result[S], error) {
					return answer(ctx, name, resume.Name, th, in, opts...)
				})
		}
		res, err := answer(ctx, name, resume.Name, th, in)
		return result(name, in.Thread, res, err)
	})
	return nil
}

// answer resumes th, a thread of the graph tool name that paused, with
// the answer or answers of in (the resume tool's, resumeName). An error
// with no Status answered nothing.
func answer[S, U any](ctx context.Context, name, resumeName string, th *runtime.Thread[S, U], in ResumeInput, opts ...runtime.RunOption) (runtime.Result[S], error) {
	a := runtime.AnswersByID(in.Answers)
	if in.Answers == nil {
		pending, err := th.Pending(ctx)
		if err != nil {
			return runtime.Result[S]{}, err
		}
		if in.Answer == nil {
			return runtime.Result[S]{}, fmt.Errorf("mcpsdk: %s: no answer for thread %q: give answer (to its only open interrupt) or answers (keyed by interrupt id: %s); nothing was answered", resumeName, in.Thread, pendingIDs(pending))
		}
		if len(pending) > 1 {
			return runtime.Result[S]{}, fmt.Errorf("mcpsdk: %s: thread %q waits on %d interrupts (%s): give answers keyed by those ids, not one answer; nothing was answered", resumeName, in.Thread, len(pending), pendingIDs(pending))
		}
		v := in.Answer
		if label, ok := v.(string); ok && len(pending) == 1 {
			if raw, ok := runtime.AnswerFor(pending[0], label); ok {
				v = raw
			}
		}
		a = runtime.Answer(v)
	}
	res, err := th.Resume(ctx, a, opts...)
	if errors.Is(err, runtime.ErrNotInterrupted) && res.Status == "" {
		// The runtime's advice names its Go API; a tool's caller starts a
		// run with the graph's own tool.
		return res, fmt.Errorf("mcpsdk: %s: %w: thread %q waits on no answer (it never paused, or its run ended); call %s to start a new run", resumeName, runtime.ErrNotInterrupted, in.Thread, name)
	}
	return res, err
}

// maxToolName is the longest tool name MCP allows.
const maxToolName = 128

// checkToolName refuses a graph tool's name, or its resume tool's, that
// MCP does not allow: 1–128 ASCII letters, digits, '_', '-' and '.'. The
// SDK takes such a name and only logs it, and a client may refuse the
// tool, or the model behind it mangle its name.
func checkToolName(name string, fromGraph bool) error {
	whose := ""
	if fromGraph {
		whose = " (the graph's name)"
	}
	var bad []string
	seen := map[rune]bool{}
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' || seen[r] {
			continue
		}
		seen[r] = true
		bad = append(bad, strconv.Quote(string(r)))
	}
	const rule = "an MCP tool name is 1–128 ASCII letters, digits, '_', '-' and '.'"
	if len(bad) > 0 {
		return fmt.Errorf("mcpsdk: AddGraph: tool name %q%s has characters MCP does not allow in one: %s; %s: set GraphTool.Name", name, whose, strings.Join(bad, ", "), rule)
	}
	if resume := name + ResumeSuffix; len(resume) > maxToolName {
		return fmt.Errorf("mcpsdk: AddGraph: tool name %q%s makes resume tool %q, %d characters, over %d; %s: set GraphTool.Name to a name of at most %d", name, whose, resume, len(resume), maxToolName, rule, maxToolName-len(ResumeSuffix))
	}
	return nil
}

// pendingIDs lists the ids of pending, quoted.
func pendingIDs(pending []runtime.PendingInterrupt) string {
	ids := make([]string, len(pending))
	for i, p := range pending {
		ids[i] = strconv.Quote(p.ID)
	}
	if len(ids) == 0 {
		return "none is open"
	}
	return strings.Join(ids, ", ")
}

// result is a run's outcome as a tool result.
func result[S any](name, thread string, res runtime.Result[S], err error) (*sdk.CallToolResult, any, error) {
	if err != nil && res.Status == "" {
		return nil, nil, err
	}
	o := Outcome[S]{Thread: thread, Status: res.Status}
	var text string
	isErr := false
	switch res.Status {
	case runtime.StatusDone:
		o.State = &res.State
		b, _ := json.Marshal(res.State)
		text = string(b)
	case runtime.StatusInterrupted, runtime.StatusParked:
		o.Pending = res.Pending
		text = pausedText(name, thread, res.Pending)
	default:
		isErr = true
		o.Error = "the run ended " + string(res.Status)
		if res.Err != nil {
			o.Error = res.Err.Error()
		}
		text = o.Error
	}
	return &sdk.CallToolResult{IsError: isErr, Content: []sdk.Content{&sdk.TextContent{Text: text}}}, o, nil
}

// pausedText says what a paused run waits on and how to answer it.
func pausedText(name, thread string, pending []runtime.PendingInterrupt) string {
	var b strings.Builder
	b.WriteString("The graph paused and needs input before it can continue:")
	for _, p := range pending {
		id, _ := json.Marshal(p.ID)
		fmt.Fprintf(&b, "\n- interrupt %s: %s", id, p.Payload)
		if len(p.Actions) > 0 {
			labels := make([]string, len(p.Actions))
			for i, a := range p.Actions {
				labels[i] = a.Label
			}
			b.WriteString(" — options: " + strings.Join(labels, ", "))
		}
	}
	th, _ := json.Marshal(thread)
	fmt.Fprintf(&b, "\nCall %s with thread %s and an answer (or answers keyed by those ids).", name+ResumeSuffix, th)
	return b.String()
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
