package checkpointtest

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

var graphContracts = []contract{
	{"GraphStepThenInterruptThenResume", testGraphInterruptResume},
	{"GraphErrorThenRerunReplaysSiblingStep", testGraphErrorRerun},
	{"GraphSendsInterruptAndResumeByID", testGraphSends},
	{"GraphConcurrentRunOfThreadIsRefused", testGraphLease},
	{"GraphForkFromOlderCheckpoint", testGraphFork},
}

type graph = runtime.Graph[runtime.Values, runtime.Values]

func compile(t *testing.T, b *runtime.Builder) *graph {
	t.Helper()
	g, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// checkChain fails t unless the thread's checkpoints, newest first, each
// name the next one as parent.
func checkChain(t *testing.T, cp runtime.Checkpointer, thread string) []*runtime.Checkpoint {
	t.Helper()
	cps, err := cp.List(t.Context(), thread, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(cps); i++ {
		if cps[i].ParentID != cps[i+1].ID {
			t.Errorf("checkpoint %s has parent %q, want the one before it, %s", cps[i].ID, cps[i].ParentID, cps[i+1].ID)
		}
	}
	return cps
}

func testGraphInterruptResume(t *testing.T, cp runtime.Checkpointer) {
	var created atomic.Int32
	g := compile(t, runtime.NewBuilder("order").Channel("order", "").Channel("approved", "").
		Node("checkout", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			id, err := runtime.Step(ctx, "create", func() (string, error) {
				return fmt.Sprintf("order-%d", created.Add(1)), nil
			})
			if err != nil {
				return nil, err
			}
			ok, err := runtime.Interrupt[bool](ctx, map[string]any{"question": "charge " + id + "?"})
			if err != nil {
				return nil, err
			}
			return runtime.Values{"order": id, "approved": ok}, nil
		}).
		Edge(spec.Start, "checkout").Edge("checkout", spec.End))
	res, err := g.Thread(cp, "t").Invoke(t.Context(), nil)
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("first run: status %s, err %v; want interrupted", res.Status, err)
	}
	if len(res.Pending) != 1 || res.Pending[0].ID != "checkout:interrupt#0" {
		t.Fatalf("pending = %+v, want one interrupt checkout:interrupt#0", res.Pending)
	}
	latest, err := cp.Get(t.Context(), "t", "")
	if err != nil || len(latest.Pending) != 1 || latest.ID != res.CheckpointID {
		t.Fatalf("the interrupted run's checkpoint: %+v, %v (result names %s)", latest, err, res.CheckpointID)
	}
	if j, err := cp.GetJournal(t.Context(), "t", latest.Pending[0].TaskID); err != nil || len(j) != 2 {
		t.Fatalf("journal of the paused task = %+v, %v; want the step and the interrupt", j, err)
	}
	res, err = g.Thread(cp, "t").Resume(t.Context(), runtime.Answer(true))
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume: status %s, err %v; want done", res.Status, err)
	}
	if d := cmp.Diff(runtime.Values{"order": "order-1", "approved": true}, res.State); d != "" {
		t.Errorf("final state (-want +got):\n%s", d)
	}
	if n := created.Load(); n != 1 {
		t.Errorf("the step ran %d times across interrupt and resume, want 1", n)
	}
	if j, err := cp.GetJournal(t.Context(), "t", latest.Pending[0].TaskID); err != nil || len(j) != 0 {
		t.Errorf("journal of the task after its superstep committed = %+v, %v; want dropped", j, err)
	}
	cps := checkChain(t, cp, "t")
	if len(cps) != 3 || len(cps[0].Next) != 0 || len(cps[0].Pending) != 0 {
		t.Errorf("thread has %d checkpoints (want start, pause, done) and the latest plans %v", len(cps), cps[0].Next)
	}
	if _, err := g.Thread(cp, "t").Resume(t.Context(), runtime.Answer(true)); err == nil {
		t.Error("a second resume of a finished thread was accepted")
	}
}

func testGraphErrorRerun(t *testing.T, cp runtime.Checkpointer) {
	var charges, failures atomic.Int32
	g := compile(t, runtime.NewBuilder("flaky").Channel("paid", "").Channel("shipped", "").
		Node("pay", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			r, err := runtime.Step(ctx, "charge", func() (int, error) { return int(charges.Add(1)), nil })
			if err != nil {
				return nil, err
			}
			return runtime.Values{"paid": r}, nil
		}).
		Node("ship", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			if failures.Add(1) == 1 {
				return nil, errors.New("carrier down")
			}
			return runtime.Values{"shipped": true}, nil
		}).
		Edge(spec.Start, "pay").Edge(spec.Start, "ship"))
	res, err := g.Thread(cp, "t").Invoke(t.Context(), nil)
	if res.Status != runtime.StatusError || err == nil {
		t.Fatalf("first run: status %s, err %v; want the sibling's error", res.Status, err)
	}
	if _, ok := res.State["paid"]; ok {
		t.Error("the failed superstep applied an update")
	}
	res, err = g.Thread(cp, "t").Invoke(t.Context(), nil)
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("rerun: status %s, err %v; want done", res.Status, err)
	}
	if paid, _ := res.State["paid"].(float64); paid != 1 || res.State["shipped"] != true {
		t.Errorf("state after the rerun = %v, want paid 1 (the first charge) and shipped", res.State)
	}
	if n := charges.Load(); n != 1 {
		t.Errorf("the sibling's completed step ran %d times, want 1 (it must replay from the journal)", n)
	}
	checkChain(t, cp, "t")
}

func testGraphSends(t *testing.T, cp runtime.Checkpointer) {
	var calls atomic.Int32
	g := compile(t, runtime.NewBuilder("fan").Channel("items", "").Channel("item", "").Channel("meta", spec.Merge).Channel("done", spec.Append).
		Node("plan", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }).
		Node("worker", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			item, _ := s["item"].(string)
			n, err := runtime.Step(ctx, "work", func() (int32, error) { return calls.Add(1), nil })
			if err != nil {
				return nil, err
			}
			ans, err := runtime.Interrupt[string](ctx, "approve "+item+"?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"done": fmt.Sprintf("%s:%s:%v", item, ans, n > 0)}, nil
		}).
		Edge(spec.Start, "plan").
		Router("plan", func(s runtime.Values) ([]runtime.Goto, error) {
			return []runtime.Goto{
				runtime.SendTo("worker", runtime.Values{"item": "apple", "meta": map[string]any{"n": 1.0}}),
				runtime.SendTo("worker", runtime.Values{"item": "pear"}),
			}, nil
		}))
	res, err := g.Thread(cp, "t").Invoke(t.Context(), nil)
	if err != nil || res.Status != runtime.StatusInterrupted || len(res.Pending) != 2 {
		t.Fatalf("first run: %s %v pending %+v; want two interrupts", res.Status, err, res.Pending)
	}
	latest, err := cp.Get(t.Context(), "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(latest.Next) != 2 || latest.Next[0].Input == nil || latest.Next[1].Input == nil {
		t.Fatalf("the paused checkpoint lost its sends' inputs: %+v", latest.Next)
	}
	if _, err := g.Thread(cp, "t").Resume(t.Context(), runtime.Answer("yes")); err == nil {
		t.Error("a bare answer to two open interrupts was accepted")
	}
	answers := map[string]any{res.Pending[0].ID: "yes", res.Pending[1].ID: "no"}
	res, err = g.Thread(cp, "t").Resume(t.Context(), runtime.AnswersByID(answers))
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume by id: %s %v; want done", res.Status, err)
	}
	if d := cmp.Diff([]any{"apple:yes:true", "pear:no:true"}, res.State["done"]); d != "" {
		t.Errorf("workers' results (-want +got):\n%s", d)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the workers' steps ran %d times, want 2 (once per send)", n)
	}
}

func testGraphLease(t *testing.T, cp runtime.Checkpointer) {
	inside, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	g := compile(t, runtime.NewBuilder("slow").
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			if runs.Add(1) == 1 {
				close(inside)
				<-release
			}
			return nil, nil
		}).Edge(spec.Start, "a"))
	done := make(chan error)
	go func() {
		_, err := g.Thread(cp, "t").Invoke(t.Context(), nil)
		done <- err
	}()
	select {
	case <-inside:
	case err := <-done:
		t.Fatalf("the first run ended before its node ran: %v", err)
	}
	_, err := g.Thread(cp, "t").Invoke(t.Context(), nil)
	if !errors.Is(err, runtime.ErrThreadBusy) {
		t.Errorf("second run of a running thread: %v, want ErrThreadBusy", err)
	}
	if _, err := g.Thread(cp, "other").Invoke(t.Context(), nil); err != nil {
		t.Errorf("a run of another thread was refused: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := g.Thread(cp, "t").Invoke(t.Context(), nil); err != nil {
		t.Errorf("a run after the first one ended: %v", err)
	}
	if n := runs.Load(); n != 3 {
		t.Errorf("node ran %d times, want 3 (the refused run must execute nothing)", n)
	}
}

func testGraphFork(t *testing.T, cp runtime.Checkpointer) {
	g := compile(t, runtime.NewBuilder("count").Channel("trail", spec.Append).
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"trail": "a"}, nil }).
		Node("b", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"trail": "b"}, nil }).
		Edge(spec.Start, "a").Edge("a", "b"))
	if _, err := g.Thread(cp, "t").Invoke(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	cps := checkChain(t, cp, "t")
	if len(cps) != 3 {
		t.Fatalf("a two-superstep run wrote %d checkpoints, want 3", len(cps))
	}
	afterA := cps[1] // planned b
	res, err := g.Thread(cp, "t").Fork(afterA.ID).Invoke(t.Context(), runtime.Values{"trail": "fork"})
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("run from %s: %s %v", afterA.ID, res.Status, err)
	}
	if d := cmp.Diff([]any{"a", "fork", "b"}, res.State["trail"]); d != "" {
		t.Errorf("forked branch state (-want +got):\n%s", d)
	}
	all, err := cp.List(t.Context(), "t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 || all[1].ParentID != afterA.ID || all[0].ParentID != all[1].ID {
		t.Fatalf("after the fork: %d checkpoints, the branch's first has parent %q (want %s)", len(all), all[1].ParentID, afterA.ID)
	}
	if latest, _ := cp.Get(t.Context(), "t", ""); latest.ID != all[0].ID {
		t.Errorf("latest = %s, want the branch's tip %s", latest.ID, all[0].ID)
	}
}
