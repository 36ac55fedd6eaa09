package spec

import (
	"fmt"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	cases := []struct {
		name     string
		from, to string // replaced once in fpBase for the new document
		want     []string
	}{
		{"no change", `"name"`, `"x-k": 1, "name"`, nil},
		{"added node", `{"id": "review", "type": "human"}`, `{"id": "review", "type": "human"}, {"id": "notify", "type": "mail"}`,
			[]string{"node-added notify new=doc.json:6:40 paused=safe new=safe"}},
		{"removed node", `{"from": "__start__", "to": "write"},
    {"from": "write", "to": "review"},
    {"from": "review", "to": "__end__", "when": {"channel": "ok", "eq": true}},
    {"from": "review", "to": "write", "when": {"channel": "ok", "eq": false}}`, `{"from": "__start__", "to": "write"},
    {"from": "write", "to": "__end__"}`,
			nil}, // set below: the node list is edited separately
		{"renamed channel", `"draft": {}`, `"text": {}`, []string{
			"channel-removed draft old=doc.json:3:25 paused=unsafe new=unsafe",
			"channel-added text new=doc.json:3:24 paused=safe new=safe",
		}},
		{"changed reducer", `"log": {"reducer": "append"}`, `"log": {"reducer": "merge"}`,
			[]string{"reducer-changed log old=doc.json:3:48 new=doc.json:3:48 paused=unsafe new=unsafe"}},
		{"absent reducer is last_write", `"ok": {"reducer": "last_write"}`, `"ok": {}`, nil},
		{"changed predicate", `"eq": false}`, `"eq": "no"}`,
			[]string{"predicate-changed review -> write old=doc.json:12:47 new=doc.json:12:47 paused=safe new=safe"}},
		{"changed config", `"temperature": 0.5`, `"temperature": 0.7`,
			[]string{"node-config-changed write old=doc.json:5:46 new=doc.json:5:46 paused=unsafe new=safe"}},
		{"changed type", `"type": "human"`, `"type": "person"`,
			[]string{"node-type-changed review old=doc.json:6:30 new=doc.json:6:30 paused=unsafe new=unsafe"}},
		{"moved node", `{"id": "write", "type": "llm", "config": {"model": "m", "temperature": 0.5, "tools": ["a", "b"]}},
    {"id": "review", "type": "human"}`, `{"id": "review", "type": "human"},
    {"id": "write", "type": "llm", "config": {"model": "m", "temperature": 0.5, "tools": ["a", "b"]}}`,
			[]string{"node-moved review, write old=doc.json:4:12 new=doc.json:4:12 paused=safe new=safe"}},
		{"renamed", `"approval"`, `"approval-v2"`,
			[]string{"name-changed approval-v2 old=doc.json:2:11 new=doc.json:2:11 paused=unsafe new=safe"}},
		{"added edge", `{"from": "write", "to": "review"}`, `{"from": "write", "to": "review"}, {"from": "write", "to": "__end__", "when": {"channel": "ok", "truthy": true}}`,
			[]string{"edge-added write -> __end__ new=doc.json:10:40 paused=safe new=safe"}},
		{"declared goto", `{"id": "review", "type": "human"}`, `{"id": "review", "type": "human", "goto": ["write"]}`,
			[]string{"node-goto-changed review old=doc.json:6:5 new=doc.json:6:47 paused=unsafe new=unsafe"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := mustDecode(t, fpBase)
			newDoc := replaceOnce(t, fpBase, tc.from, tc.to)
			want := tc.want
			if tc.name == "removed node" {
				newDoc = replaceOnce(t, newDoc, `,
    {"id": "review", "type": "human"}`, "")
				want = []string{
					"node-removed review old=doc.json:6:5 paused=unsafe new=safe",
					"edge-removed write -> review old=doc.json:10:5 paused=safe new=safe",
					"edge-removed review -> __end__ old=doc.json:11:5 paused=safe new=safe",
					"edge-removed review -> write old=doc.json:12:5 paused=safe new=safe",
					"edge-added write -> __end__ new=doc.json:9:5 paused=safe new=safe",
				}
			}
			nw := mustDecode(t, newDoc)
			changes := Compare(old, nw)
			var got []string
			for _, c := range changes {
				got = append(got, changeLine(c))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("Compare:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if (len(changes) == 0) != (old.Fingerprint() == nw.Fingerprint()) {
				t.Errorf("%d changes but fingerprints equal=%v", len(changes), old.Fingerprint() == nw.Fingerprint())
			}
		})
	}
}

func changeLine(c Change) string {
	s := fmt.Sprintf("%s %s", c.Kind, c.Subject)
	if c.OldPath != "" {
		s += " old=" + c.OldPos.String()
	}
	if c.NewPath != "" {
		s += " new=" + c.NewPos.String()
	}
	return s + fmt.Sprintf(" paused=%s new=%s", safety(c.UnsafePaused), safety(c.UnsafeNew))
}

func safety(unsafe bool) string {
	if unsafe {
		return "unsafe"
	}
	return "safe"
}

// TestCompareGoto: a goto list is a set (its order is no change, for
// Compare and Fingerprint alike); adding a target or dropping the list is
// safe, taking a target away is not.
func TestCompareGoto(t *testing.T) {
	base := replaceOnce(t, fpBase, `{"id": "review", "type": "human"}`, `{"id": "review", "type": "human", "goto": ["write", "__end__"]}`)
	for _, tc := range []struct {
		name, to string
		want     string
	}{
		{"reordered", `"goto": ["__end__", "write"]`, ""},
		{"added target", `"goto": ["write", "__end__", "review"]`, "node-goto-changed review old=doc.json:6:47 new=doc.json:6:47 paused=safe new=safe"},
		{"removed target", `"goto": ["write"]`, "node-goto-changed review old=doc.json:6:47 new=doc.json:6:47 paused=unsafe new=unsafe"},
		{"dropped list", `"x-goto": ["write"]`, "node-goto-changed review old=doc.json:6:47 new=doc.json:6:5 paused=safe new=safe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := mustDecode(t, base)
			nw := mustDecode(t, replaceOnce(t, base, `"goto": ["write", "__end__"]`, tc.to))
			var got []string
			for _, c := range Compare(old, nw) {
				got = append(got, changeLine(c))
			}
			if strings.Join(got, "\n") != tc.want {
				t.Errorf("Compare:\n%s\nwant:\n%s", strings.Join(got, "\n"), tc.want)
			}
			if (len(got) == 0) != (old.Fingerprint() == nw.Fingerprint()) {
				t.Errorf("%d changes but fingerprints equal=%v", len(got), old.Fingerprint() == nw.Fingerprint())
			}
		})
	}
}
