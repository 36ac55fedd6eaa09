package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/nodes/mcp/mcptest"
)

const serverJSON = "../../conformance/testdata/upstream/mcp/server.json"

func script(t *testing.T) *mcptest.Script {
	t.Helper()
	s, err := mcptest.Load(serverJSON)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func names(tb *mcp.Toolbox) []string {
	var out []string
	for _, t := range tb.Tools() {
		out = append(out, t.Name)
	}
	return out
}

func TestConnect(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		opts []mcp.Option
		want []string
	}{
		{"default prefix", nil, []string{"gh__search", "gh__get_file", "gh__internal_admin"}},
		{"raw names", []mcp.Option{mcp.WithPrefix("")}, []string{"search", "get_file", "internal_admin"}},
		{"allow list with a ghost", []mcp.Option{mcp.WithAllow("search", "ghost")}, []string{"gh__search"}},
		{"empty allow list", []mcp.Option{mcp.WithAllow()}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb, err := mcp.Connect(ctx, "gh", mcptest.NewSession(script(t)), c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, names(tb)); d != "" {
				t.Errorf("tools (-want +got):\n%s", d)
			}
		})
	}
	if _, err := mcp.Connect(ctx, "", mcptest.NewSession(script(t))); err == nil {
		t.Error("a toolbox without a name connected")
	}
	failing := mcptest.NewSession(script(t))
	failing.Fail = func(method string, _ any) error { return errors.New("connection refused") }
	if _, err := mcp.Connect(ctx, "s", failing); err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), `server "s"`) {
		t.Errorf("failing tools/list: %v", err)
	}
	// A repeated tool keeps its first place and its last advertisement; a
	// tool without a schema gets an object schema.
	dup := &mcptest.Script{Tools: []mcp.Tool{{Name: "dup", Description: "first"}, {Name: "other"}, {Name: "dup", Description: "second"}}}
	tb, err := mcp.Connect(ctx, "s", mcptest.NewSession(dup))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(tb); strings.Join(got, ",") != "s__dup,s__other" {
		t.Errorf("tools = %v", got)
	}
	if d, _ := tb.Tool("s__dup"); d.Description != "second" || string(d.InputSchema) != `{"type":"object"}` {
		t.Errorf("s__dup = %+v", d)
	}
	// Tools are called by their exposed name only.
	if _, err := tb.Invoke(ctx, "dup", nil); !errors.As(err, new(*mcp.UnknownToolError)) {
		t.Errorf("raw name: err = %v, want *UnknownToolError", err)
	}
}

func TestNormalizeToolResult(t *testing.T) {
	raw := func(blocks ...string) []json.RawMessage {
		var out []json.RawMessage
		for _, b := range blocks {
			out = append(out, json.RawMessage(b))
		}
		return out
	}
	for _, c := range []struct {
		name string
		in   mcp.CallToolResult
		want string // the result's JSON
	}{
		{"nothing", mcp.CallToolResult{}, `{"text":"","isError":false,"content":[]}`},
		{"null blocks dropped, non-string text ignored", mcp.CallToolResult{Content: raw(`null`, `{"type":"text","text":5}`, `{"type":"text","text":"a"}`)},
			`{"text":"a","isError":false,"content":[{"type":"text","text":5},{"type":"text","text":"a"}]}`},
		{"resources join in order, blobs add nothing", mcp.CallToolResult{Content: raw(`{"type":"resource","resource":{"uri":"a","blob":"AA=="}}`, `{"type":"text","text":"one"}`, `{"type":"resource","resource":{"uri":"b","text":"two"}}`)},
			`{"text":"one\ntwo","isError":false,"content":[{"type":"resource","resource":{"uri":"a","blob":"AA=="}},{"type":"text","text":"one"},{"type":"resource","resource":{"uri":"b","text":"two"}}]}`},
		{"error flag and structured content", mcp.CallToolResult{IsError: true, StructuredContent: json.RawMessage(`{"n":1}`)}, `{"text":"","isError":true,"content":[],"structured":{"n":1}}`},
		{"null structured content kept", mcp.CallToolResult{StructuredContent: json.RawMessage(`null`)}, `{"text":"","isError":false,"content":[],"structured":null}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := json.Marshal(mcp.NormalizeToolResult(&c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestPromptText(t *testing.T) {
	r := &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: "user"},
		{Role: "user", Content: json.RawMessage(`null`)},
		{Role: "user", Content: json.RawMessage(`[null, {"type": "text", "text": "kept"}, {"type": "text", "text": "too"}]`)},
		{Role: "assistant", Content: json.RawMessage(`{"type": "image", "data": "x"}`)},
		{Role: "assistant", Content: json.RawMessage(`{"type": "text", "text": "last"}`)},
	}}
	if got := mcp.PromptText(r); got != "kept\ntoo\n\nlast" {
		t.Errorf("PromptText = %q", got)
	}
}

func TestSkills(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("d", 2000)
	s := &mcptest.Script{
		Prompts: []mcp.Prompt{
			{Name: "Zeta: Tone!", Arguments: []mcp.PromptArgument{{Name: "tone"}, {Name: "len"}}},
			{Name: "!!!", Description: long},
		},
		PromptResults: map[string]mcp.GetPromptResult{
			"Zeta: Tone!": {Messages: []mcp.PromptMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":"body"}`)}}},
			"!!!":         {},
		},
	}
	tb, err := mcp.Connect(ctx, "s", mcptest.NewSession(s))
	if err != nil {
		t.Fatal(err)
	}
	empty := ""
	sk, err := mcp.Skills(ctx, tb, mcp.SkillsOptions{Prefix: &empty})
	if err != nil {
		t.Fatal(err)
	}
	if len(sk) != 2 || sk[0].Name != "prompt" || len(sk[0].Description) != 1024 || sk[1].Name != "zeta-tone" {
		t.Fatalf("skills = %+v", sk)
	}
	// Only optional arguments: fetched, and the names recorded.
	if sk[1].Instructions != "body" || sk[1].Metadata["arguments"] != "tone,len" {
		t.Errorf("zeta-tone = %+v", sk[1])
	}
	for in, want := range map[string]string{"Résumé Tool": "r-sum-tool", "": "prompt", strings.Repeat("a", 63) + "-bbbb": strings.Repeat("a", 63)} {
		if got := mcp.ToSkillName(in); got != want {
			t.Errorf("ToSkillName(%q) = %q, want %q", in, got, want)
		}
	}
	// A failed fetch fails the conversion.
	sess := mcptest.NewSession(s)
	sess.Fail = func(method string, _ any) error {
		if method == "prompts/get" {
			return errors.New("prompt gone")
		}
		return nil
	}
	tb, _ = mcp.Connect(ctx, "s", sess)
	if _, err := mcp.Skills(ctx, tb, mcp.SkillsOptions{}); err == nil || !strings.Contains(err.Error(), "prompt gone") {
		t.Errorf("failed fetch: %v", err)
	}
}

// A server that offers no resources or prompts lists none.
func TestNotSupported(t *testing.T) {
	ctx := context.Background()
	sess := mcptest.NewSession(&mcptest.Script{})
	sess.Fail = func(method string, _ any) error {
		if method != "tools/list" {
			return mcp.ErrNotSupported
		}
		return nil
	}
	tb, err := mcp.Connect(ctx, "s", sess)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := tb.Resources(ctx); err != nil || len(r) != 0 {
		t.Errorf("Resources = %v, %v", r, err)
	}
	if p, err := tb.Prompts(ctx); err != nil || len(p) != 0 {
		t.Errorf("Prompts = %v, %v", p, err)
	}
}
