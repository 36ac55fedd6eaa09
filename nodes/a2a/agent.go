package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ilmek-go/ilmek/nodes/internal/names"
	"github.com/ilmek-go/ilmek/runtime"
)

// RPCError is a remote agent's JSON-RPC error: the agent, the method, and
// the error's code, message and data.
type RPCError struct {
	Agent, Method string
	Code          int
	Message       string
	Data          json.RawMessage
}

// Error names the agent, the method, the code and the message.
func (e *RPCError) Error() string {
	return fmt.Sprintf("a2a: agent %q answered %s with JSON-RPC error %d: %s", e.Agent, e.Method, e.Code, e.Message)
}

// Option configures Connect.
type Option func(*Agent)

// WithName names the agent in graphs and journal keys (default: the card's
// name, slugified: "Support Desk" is support-desk).
func WithName(name string) Option { return func(a *Agent) { a.name = name } }

// WithMessageIDs sets how Invoke makes the id of a message sent without
// one (default: "msg-<agent>-<n>-" and the time in base 36). Send and the
// a2a_call node send under the step's id instead (runtime.Ctx.StepID),
// the same on every attempt.
func WithMessageIDs(mint func() string) Option { return func(a *Agent) { a.mint = mint } }

// Agent is one remote A2A agent as a graph uses it: its card, fetched once
// at Connect, and message/send, journaled.
type Agent struct {
	name string
	card AgentCard
	t    Transport
	mint func() string
	seq  atomic.Int64
	ids  atomic.Int64
}

// Connect fetches the agent's card and wraps the agent.
func Connect(ctx context.Context, t Transport, opts ...Option) (*Agent, error) {
	card, err := t.AgentCard(ctx)
	if err != nil {
		return nil, fmt.Errorf("a2a: fetch the agent card: %w", err)
	}
	if card == nil {
		return nil, errors.New("a2a: the transport returned no agent card")
	}
	a := &Agent{card: *card, t: t}
	for _, o := range opts {
		o(a)
	}
	if a.name == "" {
		a.name = Slug(card.Name)
	}
	if a.name == "" {
		return nil, fmt.Errorf("a2a: agent card name %q gives no usable agent name; pass one with WithName", card.Name)
	}
	if a.mint == nil {
		a.mint = func() string {
			return "msg-" + a.name + "-" + strconv.FormatInt(a.ids.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixMilli(), 36)
		}
	}
	return a, nil
}

// Slug is an agent's default name from its card's: lowercased, every run
// of characters outside [a-z0-9] one hyphen, hyphens trimmed at both ends,
// cut to 64 characters.
func Slug(cardName string) string { return names.Slug(cardName, 64, false) }

// Name is the agent's name.
func (a *Agent) Name() string { return a.name }

// Card is the agent card Connect fetched.
func (a *Agent) Card() AgentCard { return a.card }

// SendOptions guide Send and Invoke.
type SendOptions struct {
	// ContextID continues the remote conversation it names.
	ContextID string
	// TaskID answers that task (one that is input-required).
	TaskID string
	// Data is a data part sent after the text (for example
	// {"answers": {...}} for an ilmek agent waiting on several interrupts).
	Data map[string]any
	// MessageID is the message's id. When empty, Send uses the id of its
	// step (runtime.Ctx.StepID), the same on every attempt of the send,
	// and Invoke mints one (WithMessageIDs).
	MessageID string
	// Key is Send's journal key; default SendKey(agent). A node that sends
	// twice (ask, then answer the agent's question) gives the second send
	// its own key.
	Key string
}

// SendKey is the journal key of a message/send to agent:
// "a2a:<agent>:send", the reference's.
func SendKey(agent string) string { return "a2a:" + agent + ":send" }

// Invoke sends text (and opts.Data) with message/send, unjournaled, and
// normalizes the answer. Inside a node use Send.
func (a *Agent) Invoke(ctx context.Context, text string, opts SendOptions) (Result, error) {
	var parts []Part
	if text != "" {
		parts = append(parts, TextPart(text))
	}
	if opts.Data != nil {
		data, err := json.Marshal(opts.Data)
		if err != nil {
			return Result{}, fmt.Errorf("a2a: agent %q: encode the data part: %w", a.name, err)
		}
		parts = append(parts, Part{Kind: "data", Data: data})
	}
	if len(parts) == 0 {
		return Result{}, fmt.Errorf("a2a: agent %q: a message needs text or data", a.name)
	}
	id := opts.MessageID
	if id == "" {
		id = a.mint()
	}
	msg := Message{Kind: "message", MessageID: id, Role: "user", Parts: parts, TaskID: opts.TaskID, ContextID: opts.ContextID}
	raw, err := a.rpc(ctx, "message/send", map[string]any{"message": msg})
	if err != nil {
		return Result{}, err
	}
	t, err := ParseSendResult(raw, a.name)
	if err != nil {
		return Result{}, err
	}
	return NormalizeTask(t), nil
}

// Send sends text once for the task, across any number of replays: the
// round trip runs in runtime.Step under opts.Key (default SendKey), and on
// a replay after an interrupt, a retry or a crash the journaled result
// comes back without messaging the agent again. A failed send (a
// transport error, a JSON-RPC error, an answer matching ErrMalformed) is
// not journaled, nor is one cut off by a crash before its answer was
// journaled: the next attempt sends again, under the same message id (the
// step's, unless opts.MessageID names one), so an agent that keeps the ids
// of the messages it answered can answer it once. A task that
// ended failed or rejected is a result like any other (journaled, its
// State says so); a2a_call with textOnly fails on it instead.
func (a *Agent) Send(ctx *runtime.Ctx, text string, opts SendOptions) (Result, error) {
	return a.send(ctx, text, opts, false)
}

// send is Send; with failTask, a task that did not complete (it failed,
// was rejected or cancelled, or waits for input) is a *TaskError, not
// journaled, so that a later pass sends again.
func (a *Agent) send(ctx *runtime.Ctx, text string, opts SendOptions, failTask bool) (Result, error) {
	key := opts.Key
	if key == "" {
		key = SendKey(a.name)
	}
	return runtime.Step(ctx, key, func() (Result, error) {
		if opts.MessageID == "" {
			// The step's id is the same on every attempt of this send: an
			// agent that keeps the message ids it answered answers a
			// message sent again, after a crash or a dropped connection,
			// once.
			id, err := ctx.StepID()
			if err != nil {
				return Result{}, fmt.Errorf("a2a: agent %q: %w", a.name, err)
			}
			opts.MessageID = id
		}
		r, err := a.Invoke(ctx, text, opts)
		if err == nil && failTask && r.State != "completed" {
			return r, &TaskError{Agent: a.name, TaskID: r.TaskID, ContextID: r.ContextID, State: r.State, Message: r.StatusText}
		}
		return r, err
	})
}

// TaskError is a remote task that did not complete where the caller
// wanted its reply (a2a_call with textOnly): one that failed, was rejected
// or cancelled, or that waits for input or authorization, which a reply
// text alone cannot carry on. It holds the agent, the task, its
// conversation, its state and the text of its status message: the
// agent's reason or question.
type TaskError struct {
	Agent, TaskID, ContextID, State string
	Message                         string
}

// Error names the agent, the task, its state and the agent's reason.
func (e *TaskError) Error() string {
	reason := "the agent gave no reason"
	if e.Message != "" {
		reason = "the agent says " + strconv.Quote(e.Message)
	}
	switch e.State {
	case "failed", "rejected", "canceled":
		return fmt.Sprintf("a2a: agent %q: task %q (context %q) ended %s: %s", e.Agent, e.TaskID, e.ContextID, e.State, reason)
	}
	return fmt.Sprintf("a2a: agent %q: task %q (context %q) is %s, not completed: %s", e.Agent, e.TaskID, e.ContextID, e.State, reason)
}

// GetTask is tasks/get, unjournaled.
func (a *Agent) GetTask(ctx context.Context, taskID string) (Result, error) {
	return a.taskCall(ctx, "tasks/get", taskID)
}

// CancelTask is tasks/cancel, unjournaled.
func (a *Agent) CancelTask(ctx context.Context, taskID string) (Result, error) {
	return a.taskCall(ctx, "tasks/cancel", taskID)
}

func (a *Agent) taskCall(ctx context.Context, method, taskID string) (Result, error) {
	raw, err := a.rpc(ctx, method, map[string]any{"id": taskID})
	if err != nil {
		return Result{}, err
	}
	t, err := parseTask(raw, a.name, method)
	if err != nil {
		return Result{}, err
	}
	return NormalizeTask(t), nil
}

func (a *Agent) rpc(ctx context.Context, method string, params any) (json.RawMessage, error) {
	res, err := a.t.Post(ctx, &Request{JSONRPC: "2.0", ID: a.seq.Add(1), Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("a2a: agent %q: %s: %w", a.name, method, err)
	}
	if res == nil {
		return nil, fmt.Errorf("a2a: agent %q: %s: the transport returned no response", a.name, method)
	}
	if res.Error != nil {
		return nil, &RPCError{Agent: a.name, Method: method, Code: res.Error.Code, Message: res.Error.Message, Data: res.Error.Data}
	}
	if r := bytes.TrimSpace(res.Result); len(r) == 0 || string(r) == "null" {
		return nil, malformed(a.name, method, "answered with no result and no error")
	}
	return res.Result, nil
}
