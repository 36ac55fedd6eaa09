package checkpointtest

import (
	"errors"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// pruneContracts test checkpoint.Pruner on the backends that have it.
var pruneContracts = []contract{
	{"PruneKeepsLastAndReadsTheSame", testPruneKeepLast},
	{"PruneKeepsBranchTipsAndForkPoints", testPruneFork},
	{"PruneKeepsAnOpenPause", testPrunePause},
	{"PruneByTime", testPruneTime},
	{"PruneWithoutRulesIsRefused", testPruneNoRules},
}

func pruner(t *testing.T, cp runtime.Checkpointer) checkpoint.Pruner {
	t.Helper()
	p, ok := cp.(checkpoint.Pruner)
	if !ok {
		t.Skip("the backend does not prune (no checkpoint.Pruner)")
	}
	return p
}

// prune prunes and checks that every kept checkpoint reads as before.
func prune(t *testing.T, cp runtime.Checkpointer, thread string, opts checkpoint.PruneOptions) []*runtime.Checkpoint {
	t.Helper()
	before, err := cp.List(t.Context(), thread, 0)
	if err != nil {
		t.Fatal(err)
	}
	n, err := pruner(t, cp).Prune(t.Context(), thread, opts)
	if err != nil {
		t.Fatal(err)
	}
	after, err := cp.List(t.Context(), thread, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(before)-len(after) {
		t.Errorf("Prune reported %d dropped, but %d of %d checkpoints went", n, len(before)-len(after), len(before))
	}
	old := map[string]*runtime.Checkpoint{}
	for _, c := range before {
		old[c.ID] = c
	}
	for _, c := range after {
		o := old[c.ID]
		if o == nil {
			t.Fatalf("checkpoint %s appeared in the prune", c.ID)
		}
		if string(o.Channels) != string(c.Channels) || o.Step != c.Step || len(o.Pending) != len(c.Pending) {
			t.Fatalf("checkpoint %s reads differently after the prune: channels %q, were %q", c.ID, c.Channels, o.Channels)
		}
	}
	if len(after) > 0 && after[0].ID != before[0].ID {
		t.Fatalf("the latest checkpoint changed: %s, was %s", after[0].ID, before[0].ID)
	}
	return after
}

func testPruneKeepLast(t *testing.T, cp runtime.Checkpointer) {
	pruner(t, cp)
	g := chatGraph(t, nil)
	chat(t, g, cp, "t", 150)
	after := prune(t, cp, "t", checkpoint.PruneOptions{KeepLast: 10})
	if len(after) > 12 {
		t.Fatalf("%d checkpoints kept, want about 10", len(after))
	}
	chat(t, g, cp, "t", 80) // the thread continues on the pruned chain
	if c, _ := cp.Get(t.Context(), "t", ""); checkChat(t, c) != 230 {
		t.Fatal("the pruned thread does not continue")
	}
	prune(t, cp, "t", checkpoint.PruneOptions{KeepLast: 3})
}

func testPruneFork(t *testing.T, cp runtime.Checkpointer) {
	pruner(t, cp)
	g := chatGraph(t, nil)
	chat(t, g, cp, "t", 30)
	cps := checkChain(t, cp, "t")
	oldTip := cps[0]
	var point *runtime.Checkpoint
	for _, c := range cps {
		if checkChat(t, c) == 10 && len(c.Next) == 0 {
			point = c
		}
	}
	if _, err := g.Thread(cp, "t").Fork(point.ID).Invoke(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	chat(t, g, cp, "t", 20)
	after := prune(t, cp, "t", checkpoint.PruneOptions{KeepLast: 2})
	has := map[string]bool{}
	for _, c := range after {
		has[c.ID] = true
	}
	if !has[oldTip.ID] || !has[point.ID] {
		t.Fatalf("the old branch's tip (%v) or the fork point (%v) went", has[oldTip.ID], has[point.ID])
	}
	res, err := g.Thread(cp, "t").Fork(oldTip.ID).Invoke(t.Context(), nil)
	if err != nil || countOf(res.State["messages"]) != 31 {
		t.Fatalf("continuing the old branch after the prune: %v", err)
	}
}

func testPrunePause(t *testing.T, cp runtime.Checkpointer) {
	pruner(t, cp)
	chat(t, chatGraph(t, nil), cp, "t", 40)
	// A graph that pauses before its message.
	g := compile(t, runtime.NewBuilder("chat").Channel("messages", "append").Channel("n", "").
		Node("say", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			ok, err := runtime.Interrupt[bool](ctx, "go on?")
			if err != nil || !ok {
				return nil, err
			}
			return runtime.Values{"messages": "x", "n": countOf(s["messages"]) + 1}, nil
		}).
		Edge("__start__", "say").Edge("say", "__end__"))
	res, err := g.Thread(cp, "t").Invoke(t.Context(), nil)
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("pause: %s %v", res.Status, err)
	}
	prune(t, cp, "t", checkpoint.PruneOptions{KeepLast: 1})
	res, err = g.Thread(cp, "t").Resume(t.Context(), runtime.Answer(true))
	if err != nil || res.Status != runtime.StatusDone || countOf(res.State["messages"]) != 41 {
		t.Fatalf("resume after the prune: %s %v", res.Status, err)
	}
}

func testPruneTime(t *testing.T, cp runtime.Checkpointer) {
	pruner(t, cp)
	g := chatGraph(t, nil)
	chat(t, g, cp, "t", 20)
	cut := time.Now()
	time.Sleep(2 * time.Millisecond)
	chat(t, g, cp, "t", 5)
	after := prune(t, cp, "t", checkpoint.PruneOptions{KeepAfter: cut})
	for _, c := range after[:len(after)-1] {
		if !c.Created.After(cut) {
			t.Errorf("checkpoint %s of %v kept; only the oldest kept may be older than %v", c.ID, c.Created, cut)
		}
	}
	if len(after) < 10 || len(after) > 12 {
		t.Errorf("%d checkpoints kept, want the 10 of the last 5 turns and a plan checkpoint at most", len(after))
	}
}

func testPruneNoRules(t *testing.T, cp runtime.Checkpointer) {
	p := pruner(t, cp)
	chat(t, chatGraph(t, nil), cp, "t", 3)
	if _, err := p.Prune(t.Context(), "t", checkpoint.PruneOptions{}); !errors.Is(err, checkpoint.ErrPruneOptions) {
		t.Fatalf("Prune without rules: %v, want ErrPruneOptions", err)
	}
	if n, err := p.Prune(t.Context(), "nobody", checkpoint.PruneOptions{KeepLast: 1}); err != nil || n != 0 {
		t.Fatalf("Prune of an unknown thread: %d %v", n, err)
	}
}
