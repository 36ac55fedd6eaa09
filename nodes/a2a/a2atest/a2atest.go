// Package a2atest is an A2A transport scripted by a JSON file, for tests
// and for the conformance runner: the reference's agent.json format, an
// agent card, the task (or bare message) message/send returns for each
// message text, and JSON-RPC errors. The transport records every request,
// so a test can show that a journaled send ran once.
package a2atest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/ilmek-go/ilmek/nodes/a2a"
)

// Script is a scripted agent.
type Script struct {
	Card   a2a.AgentCard              `json:"card"`
	Sends  map[string]json.RawMessage `json:"sends"`
	Errors map[string]a2a.ErrorObject `json:"errors"`
	// Texts are the keys of Sends in the file's order.
	Texts []string `json:"-"`
}

// Parse reads a script.
func Parse(data []byte) (*Script, error) {
	var s Script
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("a2atest: the script is not a scripted A2A agent: %w", err)
	}
	var raw struct {
		Sends json.RawMessage `json:"sends"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	if len(raw.Sends) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw.Sends))
		if _, err := dec.Token(); err != nil { // {
			return nil, err
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			s.Texts = append(s.Texts, tok.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
	}
	return &s, nil
}

// Load reads the script in file.
func Load(file string) (*Script, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// Transport is an a2a.Transport answering from a Script: message/send by
// the text of the message's text parts (joined with "\n"; an unscripted
// text is error -32602), tasks/get and tasks/cancel by task id (an unknown
// one is the script's "unknown task" error), anything else -32601.
type Transport struct {
	script *Script
	// Fail, when set, is asked before every request; an error it returns
	// is the request's (a transport failure, not a JSON-RPC error).
	Fail func(req *a2a.Request) error

	mu       sync.Mutex
	requests []a2a.Request
	cards    int
}

// NewTransport returns a transport over s.
func NewTransport(s *Script) *Transport { return &Transport{script: s} }

var _ a2a.Transport = (*Transport)(nil)

// Requests returns every request posted, in order.
func (t *Transport) Requests() []a2a.Request {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]a2a.Request(nil), t.requests...)
}

// Sends returns the text of every message/send posted, in order.
func (t *Transport) Sends() []string {
	var out []string
	for _, r := range t.Requests() {
		if r.Method == "message/send" {
			out = append(out, messageText(r.Params))
		}
	}
	return out
}

// CardFetches is the number of AgentCard calls.
func (t *Transport) CardFetches() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cards
}

// AgentCard returns the script's card.
func (t *Transport) AgentCard(context.Context) (*a2a.AgentCard, error) {
	t.mu.Lock()
	t.cards++
	t.mu.Unlock()
	c := t.script.Card
	return &c, nil
}

// Post answers req from the script.
func (t *Transport) Post(_ context.Context, req *a2a.Request) (*a2a.Response, error) {
	t.mu.Lock()
	t.requests = append(t.requests, *req)
	t.mu.Unlock()
	if t.Fail != nil {
		if err := t.Fail(req); err != nil {
			return nil, err
		}
	}
	id, _ := json.Marshal(req.ID)
	res := &a2a.Response{JSONRPC: "2.0", ID: id}
	switch req.Method {
	case "message/send":
		text := messageText(req.Params)
		if r, ok := t.script.Sends[text]; ok {
			res.Result = r
		} else {
			res.Error = &a2a.ErrorObject{Code: -32602, Message: fmt.Sprintf("unscripted message %q", text)}
		}
	case "tasks/get", "tasks/cancel":
		var p struct {
			ID string `json:"id"`
		}
		b, _ := json.Marshal(req.Params)
		_ = json.Unmarshal(b, &p)
		for _, text := range t.script.Texts {
			r := t.script.Sends[text]
			var probe struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(r, &probe) == nil && probe.ID == p.ID && p.ID != "" {
				res.Result = r
				break
			}
		}
		if res.Result == nil {
			e, ok := t.script.Errors["unknown task"]
			if !ok {
				e = a2a.ErrorObject{Code: -32001, Message: fmt.Sprintf("task %q not found", p.ID)}
			}
			res.Error = &e
		}
	default:
		res.Error = &a2a.ErrorObject{Code: -32601, Message: "method not found: " + req.Method}
	}
	return res, nil
}

// messageText is the text of a message/send request's message.
func messageText(params any) string {
	b, _ := json.Marshal(params)
	var p struct {
		Message a2a.Message `json:"message"`
	}
	_ = json.Unmarshal(b, &p)
	var texts []string
	for _, part := range p.Message.Parts {
		if part.Kind == "text" && part.Text != nil {
			texts = append(texts, *part.Text)
		}
	}
	return strings.Join(texts, "\n")
}
