package a2a

import (
	"context"
	"encoding/json"
)

// ProtocolVersion is the A2A protocol revision this package speaks.
const ProtocolVersion = "0.3.0"

// Transport is a connection to one remote agent: two calls, fetch its
// Agent Card and post one JSON-RPC request. An HTTP client, a scripted
// fake ([a2atest]) or an in-process agent all fit.
//
// [a2atest]: https://pkg.go.dev/github.com/ilmek-go/ilmek/nodes/a2a/a2atest
type Transport interface {
	AgentCard(ctx context.Context) (*AgentCard, error)
	Post(ctx context.Context, req *Request) (*Response, error)
}

// AgentCard describes a remote agent (its fields the A2A specification
// names; an agent's name is the one a graph knows it by, slugified).
type AgentCard struct {
	ProtocolVersion    string        `json:"protocolVersion,omitempty"`
	Name               string        `json:"name"`
	Description        string        `json:"description,omitempty"`
	URL                string        `json:"url"`
	Version            string        `json:"version,omitempty"`
	PreferredTransport string        `json:"preferredTransport,omitempty"`
	Capabilities       *Capabilities `json:"capabilities,omitempty"`
	DefaultInputModes  []string      `json:"defaultInputModes,omitempty"`
	DefaultOutputModes []string      `json:"defaultOutputModes,omitempty"`
	Skills             []AgentSkill  `json:"skills,omitempty"`
}

// Capabilities are what an agent's card says it supports.
type Capabilities struct {
	Streaming              bool `json:"streaming"`
	PushNotifications      bool `json:"pushNotifications"`
	StateTransitionHistory bool `json:"stateTransitionHistory"`
}

// AgentSkill is one skill an agent's card lists.
type AgentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags,omitempty"`
}

// Part is one part of a message or an artifact: Kind "text" (Text), "data"
// (Data, a JSON object) or "file" (File).
type Part struct {
	Kind string          `json:"kind"`
	Text *string         `json:"text,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
	File json.RawMessage `json:"file,omitempty"`
}

// TextPart is a text part.
func TextPart(text string) Part { return Part{Kind: "text", Text: &text} }

// Message is a message of a conversation; Role is "user" or "agent".
type Message struct {
	Kind      string `json:"kind"`
	MessageID string `json:"messageId"`
	Role      string `json:"role"`
	Parts     []Part `json:"parts"`
	TaskID    string `json:"taskId,omitempty"`
	ContextID string `json:"contextId,omitempty"`
}

// Artifact is an output of a task.
type Artifact struct {
	ArtifactID string `json:"artifactId"`
	Name       string `json:"name,omitempty"`
	Parts      []Part `json:"parts"`
}

// TaskStatus is where a task stands: State is one of submitted, working,
// input-required, completed, canceled, failed, rejected, auth-required,
// unknown; Message says what the agent needs or why it stopped.
type TaskStatus struct {
	State     string   `json:"state"`
	Message   *Message `json:"message,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
}

// Task is a remote agent's unit of work.
type Task struct {
	Kind      string          `json:"kind"`
	ID        string          `json:"id"`
	ContextID string          `json:"contextId"`
	Status    TaskStatus      `json:"status"`
	Artifacts []Artifact      `json:"artifacts,omitempty"`
	History   []Message       `json:"history,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// Request is a JSON-RPC 2.0 request.
type Request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// Response is a JSON-RPC 2.0 response: Result, or Error.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *ErrorObject    `json:"error,omitempty"`
}

// ErrorObject is the error member of a JSON-RPC response.
type ErrorObject struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}
