package server

import (
	"strings"
	"testing"
)

// TestHostileThreadIDs: a thread id outside runtime.CheckThreadID's
// alphabet is a 400 naming the character, and no thread is created; a
// good one is created.
func TestHostileThreadIDs(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, id := range []string{
		"a\x00b", "a\x1b[2J", "a\x7f", "a\rb", "a\nLocation: x", "a\u0085", "invoice\u202Egpj.exe", "a\u2066b",
		"a/b", "a?b", "a#b", "a%2F", strings.Repeat("x", 201),
	} {
		p := ts.must("alice", "POST", "/threads", map[string]any{"thread_id": id}, 400).problem(t)
		if !strings.Contains(p.Detail, "thread id") {
			t.Errorf("%q: problem %+v does not name the thread id", id, p)
		}
	}
	ts.must("alice", "POST", "/threads", map[string]any{"thread_id": "sipariş 42"}, 201)
}
