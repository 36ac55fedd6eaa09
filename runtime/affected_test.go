package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestAffectedThreads: threads paused in "review" by version 1 meet each
// change; the report names the touched nodes and channels and the
// incompatibility, and leaves out finished threads, threads of other
// versions and changes that touch nothing they hold or wait in.
func TestAffectedThreads(t *testing.T) {
	ctx := context.Background()
	v1 := loadGraph(t, approvalV1)
	cp := checkpoint.NewMemory()
	pause := func(thread string, g *runtime.Graph[runtime.Values, runtime.Values]) {
		t.Helper()
		res, err := g.Thread(cp, thread).Invoke(ctx, runtime.Values{})
		if err != nil || res.Status != runtime.StatusInterrupted {
			t.Fatalf("%s: %s %v", thread, res.Status, err)
		}
	}
	for i := range 3 {
		pause(fmt.Sprintf("paused-%d", i), v1)
	}
	pause("done", v1)
	if res, err := v1.Thread(cp, "done").Resume(ctx, runtime.Answer("yes")); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("done: %s %v", res.Status, err)
	}
	other := loadGraph(t, edit(t, approvalV1, `"hello"`, `"other"`))
	pause("other-version", other)

	paused := []string{"paused-2", "paused-1", "paused-0"} // newest first, as listed
	cases := []struct {
		name         string
		to           string
		nodes, chans []string
		reason       runtime.ReasonKind
	}{
		{"an added node touches nothing", edit(t, approvalV1, `{"id": "write"`, `{"id": "mail", "type": "mail"}, {"id": "write"`), nil, nil, ""},
		{"a changed guard leaving review", edit(t, approvalV1, `"eq": "yes"`, `"eq": "ok"`), []string{"review"}, nil, ""},
		{"review reconfigured", edit(t, approvalV1, `"ship it?"`, `"ship now?"`), []string{"review"}, nil, runtime.ReasonNodeConfig},
		{"a held channel's reducer", edit(t, approvalV1, `"draft": {}`, `"draft": {"reducer": "append"}`), nil, []string{"draft"}, runtime.ReasonReducer},
		{"write reconfigured, not waited in", edit(t, approvalV1, `"hello"`, `"hi"`), nil, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			to := loadGraph(t, tc.to)
			got, err := runtime.AffectedThreads(ctx, cp, v1, to)
			if err != nil {
				t.Fatal(err)
			}
			if tc.nodes == nil && tc.chans == nil && tc.reason == "" {
				if len(got) != 0 {
					t.Fatalf("%d threads reported, want none: %+v", len(got), got)
				}
				return
			}
			var ids []string
			for _, a := range got {
				ids = append(ids, a.ThreadID)
				if d := cmp.Diff(tc.nodes, a.Nodes); d != "" {
					t.Errorf("%s: nodes (-want +got):\n%s", a.ThreadID, d)
				}
				if d := cmp.Diff(tc.chans, a.Channels); d != "" {
					t.Errorf("%s: channels (-want +got):\n%s", a.ThreadID, d)
				}
				switch {
				case tc.reason == "" && a.Incompatible != nil:
					t.Errorf("%s: incompatible: %v", a.ThreadID, a.Incompatible)
				case tc.reason != "" && (a.Incompatible == nil || a.Incompatible.Reasons[0].Kind != tc.reason || a.Incompatible.ThreadID != a.ThreadID):
					t.Errorf("%s: incompatible %v, want %s", a.ThreadID, a.Incompatible, tc.reason)
				}
				if a.Status != runtime.StatusInterrupted || a.CheckpointID == "" {
					t.Errorf("%s: status %q checkpoint %q", a.ThreadID, a.Status, a.CheckpointID)
				}
			}
			if d := cmp.Diff(paused, ids); d != "" {
				t.Errorf("threads (-want +got):\n%s", d)
			}
		})
	}
	if _, err := runtime.AffectedThreads(ctx, noLister{cp}, v1, v1); err == nil || errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("a checkpointer that cannot list threads: %v", err)
	}
}

// noLister hides Memory's ListThreads.
type noLister struct{ runtime.Checkpointer }
