package checkpointtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

var versionContracts = []contract{
	{"VersionRuleUnderPausedThread", testVersionRule},
}

// versionDoc pauses in node review, holding channel draft.
const versionDoc = `{
  "name": "approval",
  "channels": {"decision": {}, "draft": {}},
  "nodes": [
    {"id": "write", "type": "writer"},
    {"id": "review", "type": "approval", "config": {"q": 1}}
  ],
  "edges": [
    {"from": "__start__", "to": "write"},
    {"from": "write", "to": "review"},
    {"from": "review", "to": "__end__", "when": {"channel": "decision", "eq": "yes"}}
  ]
}`

// versionGraph builds doc with a registry that knows both approval types.
func versionGraph(t *testing.T, doc string) *graph {
	t.Helper()
	approval := func(spec.Node) (runtime.NodeFunc, error) {
		return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			a, err := runtime.Interrupt[string](ctx, "ok?")
			return runtime.Values{"decision": a}, err
		}, nil
	}
	g, err := runtime.Load("approval.json", []byte(doc), runtime.Registry{
		"writer": func(spec.Node) (runtime.NodeFunc, error) {
			return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"draft": "d"}, nil }, nil
		},
		"approval":  approval,
		"approval2": approval,
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// testVersionRule: a thread paused by one version of a document meets a
// changed one. The backend keeps each checkpoint's version (and, as a
// DocumentStore, the old document), so the rule of the runtime's package
// doc holds on it: an incompatible change is refused with its reason and
// writes nothing; a compatible one runs and records the new version.
func testVersionRule(t *testing.T, cp runtime.Checkpointer) {
	cases := []struct {
		name, from, to string
		want           runtime.ReasonKind
	}{
		{"config", `"q": 1`, `"q": 2`, runtime.ReasonNodeConfig},
		{"type", `"type": "approval"`, `"type": "approval2"`, runtime.ReasonNodeType},
		{"renamed channel", `"draft": {}`, `"text": {}`, runtime.ReasonChannelMissing},
		{"reducer", `"draft": {}`, `"draft": {"reducer": "append"}`, runtime.ReasonReducer},
		{"added node", `{"id": "write", "type": "writer"},`, `{"id": "write", "type": "writer"}, {"id": "extra", "type": "writer"},`, ""},
		{"changed predicate", `"eq": "yes"`, `"neq": "no"`, ""},
		{"removed paused node", `,
    {"id": "review", "type": "approval", "config": {"q": 1}}`, ``, runtime.ReasonNodeMissing},
	}
	v1 := versionGraph(t, versionDoc)
	for _, tc := range cases {
		thread := "v-" + strings.ReplaceAll(tc.name, " ", "-")
		res, err := v1.Thread(cp, thread).Invoke(t.Context(), runtime.Values{})
		if err != nil || res.Status != runtime.StatusInterrupted {
			t.Fatalf("%s: v1: %v %v", tc.name, res.Status, err)
		}
		paused := get(t, cp, thread, "")
		if paused.Fingerprint != v1.Fingerprint() || paused.Format != checkpoint.Format {
			t.Fatalf("%s: the paused checkpoint records version %q/%d, want %q/%d", tc.name, paused.Fingerprint, paused.Format, v1.Fingerprint(), checkpoint.Format)
		}
		if ds, ok := cp.(checkpoint.DocumentStore); ok {
			if _, err := ds.GetDocument(t.Context(), v1.Fingerprint()); err != nil {
				t.Fatalf("%s: the paused version's document: %v", tc.name, err)
			}
		}
		doc := strings.Replace(versionDoc, tc.from, tc.to, 1)
		if tc.want == runtime.ReasonNodeMissing {
			// The edges into and out of the removed node go with it.
			doc = strings.Replace(doc, `,
    {"from": "write", "to": "review"},
    {"from": "review", "to": "__end__", "when": {"channel": "decision", "eq": "yes"}}`, ``, 1)
		}
		v2 := versionGraph(t, doc)
		before := len(list(t, cp, thread, 0))
		res, err = v2.Thread(cp, thread).Resume(t.Context(), runtime.Answer("yes"))
		after := len(list(t, cp, thread, 0))
		if tc.want == "" {
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("%s: resume on a compatible version: %v %v", tc.name, res.Status, err)
			}
			if latest := get(t, cp, thread, ""); latest.Fingerprint != v2.Fingerprint() {
				t.Errorf("%s: the new checkpoint records version %q, want %q", tc.name, latest.Fingerprint, v2.Fingerprint())
			}
			continue
		}
		var ie *runtime.IncompatibleError
		if !errors.As(err, &ie) || len(ie.Reasons) != 1 || ie.Reasons[0].Kind != tc.want {
			t.Errorf("%s: resume: %v, want one reason %s", tc.name, err, tc.want)
		}
		if after != before {
			t.Errorf("%s: a refused resume wrote %d checkpoints", tc.name, after-before)
		}
	}
}
