package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ToolResult is a tool's answer as a graph keeps it: plain data, journaled
// and written to a channel.
type ToolResult struct {
	// Text is every text block, and the text of every embedded text
	// resource, in order, joined with "\n"; "" when there is none.
	Text string `json:"text"`
	// IsError is set when the server flagged the result as an error: the
	// tool ran and failed. It is a result like any other (journaled, not
	// retried), for a model to read; a transport failure is an error of
	// the call instead, and so is a tool error for mcp_tool with text
	// (a *ToolError).
	IsError bool `json:"isError"`
	// Content is the raw content blocks, for what Text cannot carry
	// (images, audio, resource links); never null.
	Content []json.RawMessage `json:"content"`
	// Structured is the server's structuredContent, verbatim, when it sent
	// one.
	Structured json.RawMessage `json:"structured,omitempty"`
}

// NormalizeToolResult reduces a tools/call answer to a ToolResult, as the
// reference does: null blocks dropped, text taken from blocks of type
// "text" with a string "text" and from blocks of type "resource" whose
// resource has a string "text".
func NormalizeToolResult(raw *CallToolResult) ToolResult {
	out := ToolResult{Content: []json.RawMessage{}, IsError: raw.IsError}
	var texts []string
	for _, b := range raw.Content {
		b = bytes.TrimSpace(b)
		if len(b) == 0 || string(b) == "null" {
			continue
		}
		out.Content = append(out.Content, append(json.RawMessage(nil), b...))
		if t, ok := blockText(b); ok {
			texts = append(texts, t)
		}
	}
	out.Text = strings.Join(texts, "\n")
	if len(raw.StructuredContent) > 0 {
		out.Structured = append(json.RawMessage(nil), raw.StructuredContent...)
	}
	return out
}

// blockText is the text a content block carries for a reader: a text
// block's, or an embedded text resource's.
func blockText(b json.RawMessage) (string, bool) {
	var blk struct {
		Type     json.RawMessage `json:"type"`
		Text     json.RawMessage `json:"text"`
		Resource *struct {
			Text json.RawMessage `json:"text"`
		} `json:"resource"`
	}
	if json.Unmarshal(b, &blk) != nil {
		return "", false
	}
	var typ string
	if json.Unmarshal(blk.Type, &typ) != nil {
		return "", false
	}
	switch {
	case typ == "text":
		return jsonString(blk.Text)
	case typ == "resource" && blk.Resource != nil:
		return jsonString(blk.Resource.Text)
	}
	return "", false
}

func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// PromptText renders a prompts/get answer as text: per message, its text
// blocks joined with "\n"; messages without text left out; the rest joined
// with a blank line.
func PromptText(r *GetPromptResult) string {
	var msgs []string
	for _, m := range r.Messages {
		var blocks []json.RawMessage
		c := bytes.TrimSpace(m.Content)
		if len(c) > 0 && c[0] == '[' {
			if json.Unmarshal(c, &blocks) != nil {
				continue
			}
		} else if len(c) > 0 {
			blocks = []json.RawMessage{c}
		}
		var texts []string
		for _, b := range blocks {
			var blk struct {
				Type json.RawMessage `json:"type"`
				Text json.RawMessage `json:"text"`
			}
			if json.Unmarshal(b, &blk) != nil || string(blk.Type) != `"text"` {
				continue
			}
			if t, ok := jsonString(blk.Text); ok {
				texts = append(texts, t)
			}
		}
		if t := strings.Join(texts, "\n"); t != "" {
			msgs = append(msgs, t)
		}
	}
	return strings.Join(msgs, "\n\n")
}
