package a2a

import (
	"encoding/json"
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

// NormalizeTask reduces a task to a Result.
func NormalizeTask(t *Task) Result {
	r := Result{TaskID: t.ID, ContextID: t.ContextID, State: t.Status.State, NeedsInput: t.Status.State == "input-required"}
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

// ParseSendResult reads the result of message/send: a task, or a bare
// message (for agents that keep no tasks), which reads as a completed task
// whose id is "message:<messageId>" (the message's task id when it names
// one), whose context is the message's (else agent) and whose one artifact
// is the message's parts.
func ParseSendResult(raw json.RawMessage, agent string) (*Task, error) {
	var probe struct {
		Kind   string          `json:"kind"`
		ID     json.RawMessage `json:"id"`
		Status json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("a2a: agent %q: message/send answered with neither a task nor a message: %w", agent, err)
	}
	if probe.Kind == "task" || probe.Status != nil && probe.ID != nil {
		var t Task
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("a2a: agent %q: message/send answered with a malformed task: %w", agent, err)
		}
		return &t, nil
	}
	var m Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("a2a: agent %q: message/send answered with a malformed message: %w", agent, err)
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
