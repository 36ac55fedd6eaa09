package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Result is a task as a graph keeps it: plain data, journaled and written
// to a channel.
type Result struct {
	TaskID string `json:"taskId"`
	// ContextID is the remote conversation; send it back to continue it.
	ContextID string `json:"contextId"`
	State     string `json:"state"`
	// Text is the text of the task's artifacts (the reply), each artifact's
	// text parts joined with "\n", empty ones left out, joined with "\n".
	Text string `json:"text"`
	// StatusText is the text of the status message: what the agent needs,
	// or why it stopped.
	StatusText string `json:"statusText"`
	// StatusData is the first data part of the status message, when there
	// is one (an ilmek agent puts the interrupts it waits on there, as
	// {"pending": [...]}).
	StatusData json.RawMessage `json:"statusData,omitempty"`
	// NeedsInput is State == "input-required": send the next message on
	// TaskID.
	NeedsInput bool `json:"needsInput"`
	// Task is the task as this package reads it (the members Task
	// declares; a bare message reply as the completed task it reads as).
	Task json.RawMessage `json:"task,omitempty"`
}

// NormalizeTask reduces a task to a Result; a status without a state
// reads as "unknown", as the reference reads it.
func NormalizeTask(t *Task) Result {
	r := Result{TaskID: t.ID, ContextID: t.ContextID, State: t.Status.State, NeedsInput: t.Status.State == "input-required"}
	if r.State == "" {
		r.State = "unknown"
	}
	var texts []string
	for _, a := range t.Artifacts {
		if s := TextOf(a.Parts); s != "" {
			texts = append(texts, s)
		}
	}
	r.Text = strings.Join(texts, "\n")
	if m := t.Status.Message; m != nil {
		r.StatusText = TextOf(m.Parts)
		for _, p := range m.Parts {
			if p.Kind == "data" {
				r.StatusData = p.Data
				if r.StatusData == nil {
					r.StatusData = json.RawMessage("null")
				}
				break
			}
		}
	}
	r.Task, _ = json.Marshal(t)
	return r
}

// TextOf joins the text parts of parts with "\n".
func TextOf(parts []Part) string {
	var texts []string
	for _, p := range parts {
		if p.Kind == "text" && p.Text != nil {
			texts = append(texts, *p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// ParseSendResult reads the result of message/send: a task (kind "task",
// or an object with an id and a status), or a bare message (an object with
// a string messageId and a list of parts, for agents that keep no tasks),
// which reads as a completed task whose id is "message:<messageId>" (the
// message's task id when it names one), whose context is the message's
// (else agent) and whose one artifact is the message's parts. Anything
// else, and a task without a status object, is an error matching
// [ErrMalformed], as the reference refuses it.
func ParseSendResult(raw json.RawMessage, agent string) (*Task, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil || probe == nil {
		return nil, malformed(agent, "message/send", "answered with neither a task nor a message: the result is "+kindOf(raw)+", not an object")
	}
	var kind string
	_ = json.Unmarshal(probe["kind"], &kind)
	_, hasID := probe["id"]
	_, hasStatus := probe["status"]
	if kind == "task" || hasID && hasStatus {
		return parseTask(raw, agent, "message/send")
	}
	var id string
	if json.Unmarshal(probe["messageId"], &id) != nil || !isArray(probe["parts"]) {
		return nil, malformed(agent, "message/send", "answered with neither a task nor a message (a task has an id and a status, a message a string messageId and a list of parts)")
	}
	var m Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, malformed(agent, "message/send", "answered with a malformed message: "+err.Error())
	}
	t := &Task{Kind: "task", ID: m.TaskID, ContextID: m.ContextID, Status: TaskStatus{State: "completed"},
		Artifacts: []Artifact{{ArtifactID: m.MessageID, Parts: m.Parts}}}
	if t.ID == "" {
		t.ID = "message:" + m.MessageID
	}
	if t.ContextID == "" {
		t.ContextID = agent
	}
	return t, nil
}

// parseTask reads a task that method answered with; one without a status
// object is refused.
func parseTask(raw json.RawMessage, agent, method string) (*Task, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil || probe == nil {
		return nil, malformed(agent, method, "answered with "+kindOf(raw)+", not a task")
	}
	var id string
	_ = json.Unmarshal(probe["id"], &id)
	if st := bytes.TrimSpace(probe["status"]); len(st) == 0 || st[0] != '{' {
		return nil, malformed(agent, method, fmt.Sprintf("answered with task %q, which has no status", id))
	}
	var t Task
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, malformed(agent, method, fmt.Sprintf("answered with a malformed task %q: %v", id, err))
	}
	return &t, nil
}

// malformedError is an answer of agent to method that does not read as
// A2A; it matches ErrMalformed.
type malformedError struct{ msg string }

func (e *malformedError) Error() string        { return e.msg }
func (e *malformedError) Is(target error) bool { return target == ErrMalformed }

func malformed(agent, method, what string) error {
	return &malformedError{msg: fmt.Sprintf("a2a: agent %q: %s %s; the agent does not answer as A2A's JSON-RPC binding says: check that the agent's URL is an A2A endpoint", agent, method, what)}
}

// kindOf names the JSON kind of raw.
func kindOf(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	switch {
	case len(b) == 0:
		return "empty"
	case b[0] == '{':
		return "an object"
	case b[0] == '[':
		return "an array"
	case b[0] == '"':
		return "a string"
	case string(b) == "null":
		return "null"
	case string(b) == "true" || string(b) == "false":
		return "a boolean"
	}
	return "a number"
}

func isArray(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	return len(b) > 0 && b[0] == '['
}

// ErrMalformed is matched by the error of an answer that does not read as
// A2A: a response with no result and no error, a message/send result that
// is neither a task nor a message, a task without a status. Such a call is
// not journaled (the agent answered nothing a graph can keep), so a retry
// or a later run sends again.
var ErrMalformed = errors.New("a2a: the agent's answer does not read as A2A")
