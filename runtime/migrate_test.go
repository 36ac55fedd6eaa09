package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

func TestMigrateAcrossIncompatibleChanges(t *testing.T) {
	migrateCases(t, func(t *testing.T) runtime.Checkpointer { return checkpoint.NewMemory() })
}

// migrateCases: a thread paused in review under v1 is refused by v2 and
// moved with Migrate: (b) the paused node is removed (the plan moves to
// "write"), (c) a held channel is renamed (its value moves). A dry run
// writes nothing; the migration is in the thread's history; the thread
// then runs on v2.
func migrateCases(t *testing.T, newCP func(t *testing.T) runtime.Checkpointer) {
	v2Removed := `{"name": "approval", "channels": {"decision": {}, "draft": {}, "log": {"reducer": "append"}},
		"nodes": [{"id": "write", "type": "writer", "config": {"text": "hello"}}],
		"edges": [{"from": "__start__", "to": "write"}, {"from": "write", "to": "__end__"}]}`
	cases := []struct {
		name    string
		newDoc  string
		fn      runtime.MigrateFunc[runtime.Values, runtime.Values]
		changed []string
		added   []string
		removed []string
		plan    []string
	}{
		{"b removed node", v2Removed, func(old runtime.Values, planned []string) (runtime.Values, []string, error) {
			if !slices.Equal(planned, []string{"review"}) {
				return nil, nil, fmt.Errorf("planned %v", planned)
			}
			next := maps.Clone(old)
			next["decision"] = "skipped"
			return next, []string{"write"}, nil
		}, nil, []string{"decision"}, nil, []string{"write"}},
		{"c renamed channel", edit(t, approvalV1, `"draft": {}`, `"text": {}`), func(old runtime.Values, planned []string) (runtime.Values, []string, error) {
			next := maps.Clone(old)
			next["text"] = next["draft"]
			delete(next, "draft")
			return next, planned, nil
		}, nil, []string{"text"}, []string{"draft"}, []string{"review"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cp := newCP(t)
			v1, v2 := loadGraph(t, approvalV1), loadGraph(t, tc.newDoc)
			if res, err := v1.Thread(cp, "t").Invoke(ctx, runtime.Values{}); err != nil || res.Status != runtime.StatusInterrupted {
				t.Fatalf("v1: %v %v", res.Status, err)
			}
			if _, err := v2.Thread(cp, "t").Resume(ctx, runtime.Answer("yes")); !errors.Is(err, runtime.ErrIncompatible) {
				t.Fatalf("v2 resume: %v, want ErrIncompatible", err)
			}
			before, _ := cp.List(ctx, "t", 0)
			dry, err := runtime.Migrate(ctx, cp, "t", v1, v2, tc.fn, true)
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := cp.List(ctx, "t", 0); len(after) != len(before) || dry.CheckpointID != "" {
				t.Fatalf("a dry run wrote %d checkpoints", len(after)-len(before))
			}
			if !slices.Equal(dry.Changed, tc.changed) || !slices.Equal(dry.Added, tc.added) || !slices.Equal(dry.Removed, tc.removed) ||
				!slices.Equal(dry.NewPlan, tc.plan) || !slices.Equal(dry.OldPlan, []string{"review"}) || len(dry.DroppedInterrupts) != 1 {
				t.Errorf("dry run report %+v", dry)
			}
			rep, err := runtime.Migrate(ctx, cp, "t", v1, v2, tc.fn, false)
			if err != nil {
				t.Fatal(err)
			}
			latest, err := cp.Get(ctx, "t", "")
			if err != nil || latest.ID != rep.CheckpointID || latest.MigratedFrom != v1.Fingerprint() || latest.Fingerprint != v2.Fingerprint() {
				t.Fatalf("history after the migration: %+v %v", latest, err)
			}
			// The thread runs on v2 now: it re-asks in review, or ends.
			res, err := v2.Thread(cp, "t").Invoke(ctx, runtime.Values{})
			if err != nil {
				t.Fatalf("v2 after the migration: %v", err)
			}
			if res.Status == runtime.StatusInterrupted {
				res, err = v2.Thread(cp, "t").Resume(ctx, runtime.Answer("yes"))
			}
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("v2 after the migration: %v %v", res.Status, err)
			}
			// A second migration from v1 is refused: v2 wrote the thread.
			var me *runtime.MigrationError
			if _, err := runtime.Migrate(ctx, cp, "t", v1, v2, tc.fn, true); !errors.As(err, &me) {
				t.Errorf("migrating from the wrong version: %v, want a *MigrationError", err)
			}
		})
	}
	t.Run("invalid result", func(t *testing.T) {
		ctx := context.Background()
		cp := newCP(t)
		v1, v2 := loadGraph(t, approvalV1), loadGraph(t, v2Removed)
		if _, err := v1.Thread(cp, "t").Invoke(ctx, runtime.Values{}); err != nil {
			t.Fatal(err)
		}
		before, _ := cp.List(ctx, "t", 0)
		_, err := runtime.Migrate(ctx, cp, "t", v1, v2, func(old runtime.Values, planned []string) (runtime.Values, []string, error) {
			return old, planned, nil // keeps "review", which v2 has not
		}, false)
		var me *runtime.MigrationError
		if !errors.As(err, &me) {
			t.Fatalf("Migrate: %v, want a *MigrationError", err)
		}
		if after, _ := cp.List(ctx, "t", 0); len(after) != len(before) {
			t.Error("a refused migration wrote a checkpoint")
		}
	})
}
