package gen

import (
	"strings"
	"testing"
)

func TestGoName(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "llm", want: "LLM"},
		{in: "http_call", want: "HTTPCall"},
		{in: "http-call", want: "HTTPCall"},
		{in: "http call", want: "HTTPCall"},
		{in: "user_id", want: "UserID"},
		{in: "userId", want: "UserID"},
		{in: "userID", want: "UserID"},
		{in: "HTTPServer", want: "HTTPServer"},
		{in: "support-agent", want: "SupportAgent"},
		{in: "messages", want: "Messages"},
		{in: "v2", want: "V2"},
		{in: "node_1", want: "Node1"},
		{in: "type", want: "Type"},
		{in: "func", want: "Func"},
		{in: "json_url", want: "JSONURL"},
		{in: "a\n*/b", want: "AB"},
		{in: "élan", want: "Élan"},
		{in: "", err: "has no letter or digit"},
		{in: "---", err: "has no letter or digit"},
		{in: "*/", err: "has no letter or digit"},
		{in: "1st", err: "starts with a digit"},
		{in: "日本", err: "does not start with an upper-case letter"},
	} {
		got, err := GoName(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("GoName(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("GoName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestGoSuffix: node ids follow the prefix Node, so they may start with a
// digit or a caseless letter; only a name without letters or digits fails.
func TestGoSuffix(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "agent", want: "NodeAgent"},
		{in: "1st", want: "Node1st"},
		{in: "3f2a9c1e-77b0-4d2e", want: "Node3f2a9c1e77b04d2e"},
		{in: "日本", want: "Node日本"},
		{in: "٣", want: "Node٣"},
		{in: "user_id", want: "NodeUserID"},
		{in: "", err: "has no letter or digit"},
		{in: "*/", err: "has no letter or digit"},
	} {
		got, err := GoSuffix("Node", tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("GoSuffix(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("GoSuffix(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestCheckPackageName(t *testing.T) {
	for name, ok := range map[string]bool{"supportgraph": true, "type": false, "string": false, "main": false, "init": false, "_": false, "a-b": false, "1x": false} {
		if err := CheckPackageName(name); (err == nil) != ok {
			t.Errorf("CheckPackageName(%q) = %v", name, err)
		}
	}
}

func TestParseTypeExpr(t *testing.T) {
	for in, want := range map[string]string{
		"string":                     "n::string",
		"[]example.com/chat.Message": "s(n:example.com/chat:Message)",
		"*example.com/shop.Cart":     "*(n:example.com/shop:Cart)",
		"map[string]example.com/x.Y": "m(n::string,n:example.com/x:Y)",
		"time.Duration":              "n:time:Duration",
		"[]*example.com/a/b.v2.T":    "s(*(n:example.com/a/b.v2:T))",
		"[3]int":                     "error",
		"example.com/x.y":            "error",
		"map[string]":                "error",
		"example.com/x.List[int]":    "error",
		"":                           "error",
	} {
		e, err := parseTypeExpr(in)
		got := "error"
		if err == nil {
			got = show(e)
		}
		if got != want {
			t.Errorf("parseTypeExpr(%q) = %s (%v), want %s", in, got, err, want)
		}
	}
}

func show(e *typeExpr) string {
	switch e.op {
	case '*':
		return "*(" + show(e.elem) + ")"
	case 's':
		return "s(" + show(e.elem) + ")"
	case 'm':
		return "m(" + show(e.key) + "," + show(e.elem) + ")"
	}
	return "n:" + e.pkg + ":" + e.name
}
