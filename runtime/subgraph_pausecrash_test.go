package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// pauseCrashGraph is p1 -> sub -> p2 in the parent, c1 -> c2 -> c3 in the
// child sub; c2 and p2 each run a step, ask a person, and run a step with
// the answer. runs counts each step's runs; answers lists what c2post got.
type pauseCrashGraph struct {
	g       *runtime.Graph[runtime.Values, runtime.Values]
	mu      sync.Mutex
	runs    map[string]int
	answers []string
}

func newPauseCrashGraph(t *testing.T) *pauseCrashGraph {
	pg := &pauseCrashGraph{runs: map[string]int{}}
	step := func(ctx *runtime.Ctx, name, arg string) error {
		_, err := runtime.Step(ctx, name, func() (bool, error) {
			pg.mu.Lock()
			defer pg.mu.Unlock()
			pg.runs[name]++
			if name == "c2post" {
				pg.answers = append(pg.answers, arg)
			}
			return true, nil
		})
		return err
	}
	plain := func(name string) runtime.NodeFunc {
		return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			return runtime.Values{"log": name}, step(ctx, name, "")
		}
	}
	asks := func(name string) runtime.NodeFunc {
		return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := step(ctx, name+"pre", ""); err != nil {
				return nil, err
			}
			ans, err := runtime.Interrupt[string](ctx, name+"?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"log": name + "=" + ans}, step(ctx, name+"post", ans)
		}
	}
	child := mustCompile(t, runtime.NewBuilder("child").Channel("log", spec.Append).
		Node("c1", plain("c1")).Node("c2", asks("c2")).Node("c3", plain("c3")).
		Edge(spec.Start, "c1").Edge("c1", "c2").Edge("c2", "c3").Edge("c3", spec.End))
	pg.g = mustCompile(t, runtime.NewBuilder("parent").Channel("log", spec.Append).
		Node("p1", plain("p1")).
		Subgraph("sub", child, nil, map[string]string{"log": "log"}).
		Node("p2", asks("p2")).
		Edge(spec.Start, "p1").Edge("p1", "sub").Edge("sub", "p2").Edge("p2", spec.End))
	return pg
}

// childCheckpoint is the child checkpoint that a write of a parent task's
// journal carries; nil when it carries none.
func childCheckpoint(entries []checkpoint.JournalEntry) *runtime.Checkpoint {
	for _, e := range entries {
		if e.Key == "subgraph:checkpoint" {
			var cp runtime.Checkpoint
			if json.Unmarshal(e.Value, &cp) == nil {
				return &cp
			}
		}
	}
	return nil
}

// finish answers the child's question by its path id on a new Thread, as a
// new process would, then p2's, and checks the thread ends done with every
// step run once and c2post given the answer.
func (pg *pauseCrashGraph) finish(t *testing.T, store runtime.Checkpointer) {
	t.Helper()
	ctx := context.Background()
	th := pg.g.Thread(store, "t")
	res, err := th.Resume(ctx, runtime.AnswersByID(map[string]any{"sub/c2:interrupt#0": "yes"}))
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("Resume of sub/c2:interrupt#0: %s %v, want interrupted at p2", res.Status, err)
	}
	res, err = pg.g.Thread(store, "t").Resume(ctx, runtime.Answer("ok"))
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("Resume of p2: %s %v, want done", res.Status, err)
	}
	if got, want := fmt.Sprint(res.State["log"]), "[p1 c1 c2=yes c3 p2=ok]"; got != want {
		t.Errorf("log %s, want %s", got, want)
	}
	for _, name := range []string{"p1", "c1", "c2pre", "c2post", "c3", "p2pre", "p2post"} {
		if n := pg.runs[name]; n != 1 {
			t.Errorf("step %s ran %d times, want once", name, n)
		}
	}
	if !slices.Equal(pg.answers, []string{"yes"}) {
		t.Errorf("c2post got %q, want [yes]", pg.answers)
	}
}

// A process that dies after the child's pause is committed (in the parent
// task's journal) and before the parent's pause checkpoint is, leaves a
// thread whose next run raises the child's question again, under its
// path-qualified id, instead of failing on the child's "waiting on a
// person" for good.
func TestSubgraphPauseLostBeforeParentCommit(t *testing.T) {
	ctx := context.Background()
	pg := newPauseCrashGraph(t)
	store := newFaultyStore()
	defer store.checkReleased(t)
	store.failPut = func(_ int, cp *runtime.Checkpoint) error {
		if len(cp.Pending) > 0 {
			return fmt.Errorf("killed before the parent's pause committed: %w", errInjected)
		}
		return nil
	}
	if res, err := pg.g.Thread(store, "t").Invoke(ctx, nil); err == nil {
		t.Fatalf("first run: %s, want the injected failure of the pause's commit", res.Status)
	}
	store.heal()
	if sub := childCheckpoint(mustJournal(t, store, "sub")); sub == nil || len(sub.Pending) != 1 {
		t.Fatalf("the child's pause was not committed in the parent task's journal: %+v", sub)
	}

	// A new process: its run raises the child's pause as the thread's.
	th := pg.g.Thread(store, "t")
	res, err := th.Invoke(ctx, nil)
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("run after the lost pause: %s %v, want interrupted", res.Status, err)
	}
	pending, err := pg.g.Thread(store, "t").Pending(ctx)
	if err != nil || len(pending) != 1 || pending[0].ID != "sub/c2:interrupt#0" || string(pending[0].Payload) != `"c2?"` {
		t.Fatalf("Pending = %+v, %v; want the child's question as sub/c2:interrupt#0", pending, err)
	}
	pg.finish(t, store)
}

// A process that dies after the answer to the child's question is
// journaled and before the child's resume commits: the next run resumes
// the child with that answer, not ask again.
func TestSubgraphAnswerJournaledBeforeChildCommit(t *testing.T) {
	ctx := context.Background()
	pg := newPauseCrashGraph(t)
	store := newFaultyStore()
	defer store.checkReleased(t)
	res, err := pg.g.Thread(store, "t").Invoke(ctx, nil)
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("first run: %s %v, want interrupted", res.Status, err)
	}
	// The child's first commit of its resume fails: the child's thread
	// stays paused, the answer in the parent task's journal.
	store.failPutJournal = func(_ int, _ string, entries []checkpoint.JournalEntry) error {
		if sub := childCheckpoint(entries); sub != nil && len(sub.Pending) == 0 {
			return fmt.Errorf("killed before the child's resume committed: %w", errInjected)
		}
		return nil
	}
	if res, err := pg.g.Thread(store, "t").Resume(ctx, runtime.AnswersByID(map[string]any{"sub/c2:interrupt#0": "yes"})); err == nil {
		t.Fatalf("resume: %s, want the injected failure of the child's commit", res.Status)
	}
	store.heal()
	j := mustJournal(t, store, "sub")
	if sub := childCheckpoint(j); sub == nil || len(sub.Pending) != 1 {
		t.Fatalf("the child's thread should still be paused: %+v", sub)
	}
	if !slices.ContainsFunc(j, func(e checkpoint.JournalEntry) bool { return e.Interrupt && e.Answered && string(e.Value) == `"yes"` }) {
		t.Fatalf("the answer is not in the parent task's journal: %+v", j)
	}
	res, err = pg.g.Thread(store, "t").Invoke(ctx, nil)
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("run after the lost resume: %s %v, want interrupted at p2", res.Status, err)
	}
	pending, err := pg.g.Thread(store, "t").Pending(ctx)
	if err != nil || len(pending) != 1 || pending[0].ID != "p2:interrupt#0" {
		t.Fatalf("Pending = %+v, %v; want p2's question only", pending, err)
	}
	res, err = pg.g.Thread(store, "t").Resume(ctx, runtime.Answer("ok"))
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("Resume of p2: %s %v, want done", res.Status, err)
	}
	for _, name := range []string{"p1", "c1", "c2pre", "c2post", "c3", "p2pre", "p2post"} {
		if n := pg.runs[name]; n != 1 {
			t.Errorf("step %s ran %d times, want once", name, n)
		}
	}
	if !slices.Equal(pg.answers, []string{"yes"}) {
		t.Errorf("c2post got %q, want [yes]", pg.answers)
	}
}

// mustJournal is the journal of the task of node key in the plan of the
// thread's latest checkpoint.
func mustJournal(t *testing.T, store runtime.Checkpointer, key string) []checkpoint.JournalEntry {
	t.Helper()
	cp := latest(t, store, "t")
	j, err := store.GetJournal(context.Background(), "t", cp.PlanID+":"+key)
	if err != nil {
		t.Fatal(err)
	}
	if len(j) == 0 {
		t.Fatalf("no journal for task %s of plan %s (next %+v)", key, cp.PlanID, cp.Next)
	}
	return j
}
