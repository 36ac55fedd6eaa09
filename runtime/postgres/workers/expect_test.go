package workers_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/internal/testgraphs"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// asking is testgraphs.Asking(3).
func asking(t testing.TB) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := testgraphs.Asking(3)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSubmitExpectedLatest: a resume that names the checkpoint whose
// question it answers (Request.ExpectedLatest), submitted again after it
// ran (a client that lost the reply, without a key), ends refused with
// ErrThreadMoved's text and does not answer the thread's next question,
// though it has the same id; a start against a checkpoint the thread has
// left is refused too, and one against its latest runs. A fork refuses
// the field.
func TestSubmitExpectedLatest(t *testing.T) {
	q := openQueue(t)
	ctx := context.Background()
	startWorkers(t, q, map[string]workers.Runnable{"asking": workers.Graph(asking(t))}, 1)
	const thread = "expect-1"
	none := ""
	id, err := q.Submit(ctx, workers.Request{Graph: "asking", Thread: thread, Input: json.RawMessage(`{}`), ExpectedLatest: &none})
	if err != nil {
		t.Fatal(err)
	}
	o := wait(t, q, id)
	if o.State != "interrupted" || len(o.Pending) != 1 {
		t.Fatalf("the start: %+v, want interrupted on one question", o)
	}
	ask := o.Pending[0].ID
	answers := func(a string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{ask: a})
		return b
	}
	latest := func() string {
		t.Helper()
		cp, err := q.Store().Get(ctx, thread, "")
		if err != nil {
			t.Fatal(err)
		}
		return cp.ID
	}
	asked := latest()
	answer := workers.Request{Graph: "asking", Thread: thread, Kind: workers.KindResume, Input: answers("one"), ExpectedLatest: &asked}
	if id, err = q.Submit(ctx, answer); err != nil {
		t.Fatal(err)
	}
	if o := wait(t, q, id); o.State != "interrupted" || o.Pending[0].ID != ask {
		t.Fatalf("the resume: %+v, want interrupted on %s again", o, ask)
	}
	again := latest()
	if id, err = q.Submit(ctx, answer); err != nil {
		t.Fatal(err)
	}
	o = wait(t, q, id)
	if o.State != "error" || !strings.Contains(o.Error, runtime.ErrThreadMoved.Error()) || len(o.Runs) != 0 {
		t.Fatalf("the resume sent again: %+v, want error with ErrThreadMoved's text and no run", o)
	}
	if now := latest(); now != again {
		t.Fatalf("the refused resume moved the thread from %s to %s", again, now)
	}
	// A start decided before the thread asked again.
	if id, err = q.Submit(ctx, workers.Request{Graph: "asking", Thread: thread, Input: json.RawMessage(`{}`), ExpectedLatest: &none}); err != nil {
		t.Fatal(err)
	}
	if o := wait(t, q, id); o.State != "error" || !strings.Contains(o.Error, runtime.ErrThreadMoved.Error()) {
		t.Fatalf("a start against a thread that moved: %+v", o)
	}
	answer.Input, answer.ExpectedLatest = answers("two"), &again
	if id, err = q.Submit(ctx, answer); err != nil {
		t.Fatal(err)
	}
	o = wait(t, q, id)
	if o.State != "interrupted" || logOf(t, o) != "[one two]" {
		t.Fatalf("the resume of the latest question: %+v (log %s), want interrupted with [one two]", o, o.Result)
	}
	fork := workers.Request{Graph: "asking", Thread: thread, Input: json.RawMessage(`{}`), From: asked, ExpectedLatest: &asked}
	if _, err := q.Submit(ctx, fork); err == nil || errors.Is(err, workers.ErrKeyReused) {
		t.Errorf("a fork with ExpectedLatest: %v, want refused", err)
	}
	// A key's request is the same only with the same expectation.
	other := again + "x"
	keyed := workers.Request{Graph: "asking", Thread: "expect-2", Input: json.RawMessage(`{}`), Key: "k", ExpectedLatest: &again}
	if _, err := q.Submit(ctx, keyed); err != nil {
		t.Fatal(err)
	}
	keyed.ExpectedLatest = &other
	if _, err := q.Submit(ctx, keyed); !errors.Is(err, workers.ErrKeyReused) {
		t.Errorf("the key with another expectation: %v, want ErrKeyReused", err)
	}
}
