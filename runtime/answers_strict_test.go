package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// escalation is an answer whose zero value is a decision: "no page".
type escalation struct {
	Approved bool   `json:"approved"`
	Page     bool   `json:"page"`
	Note     string `json:"note,omitempty"`
}

// TestInterruptAnswersStrict: across resumes on the memory checkpointer, a
// null, misspelt, case-folded or missing member of a struct answer is
// refused with ErrAnswerType, nothing is written and the interrupt stays
// open; the right answer then reaches the node. A pointer answer accepts
// null, which reaches the node as nil.
func TestInterruptAnswersStrict(t *testing.T) {
	ctx := context.Background()
	var got []string
	g := mustCompile(t, runtime.NewBuilder("escalate").Channel("out", "").
		Node("ask", func(rc *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			e, err := runtime.Interrupt[escalation](rc, "page someone?")
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(e)
			got = append(got, string(b))
			return runtime.Values{"out": string(b)}, nil
		}).Edge(spec.Start, "ask"))
	cp := checkpoint.NewMemory()
	thread := g.Thread(cp, "esc")
	if _, err := thread.Invoke(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		answer string
		want   string
	}{
		{`null`, "answer is null, want object"},
		{`{"approved":true,"pgae":true}`, `did you mean "page"?`},
		{`{"Approved":true,"page":true}`, `did you mean "approved"?`},
		{`{"approved":true}`, `lacks the required member "page"`},
		{`{"approved":true,"page":null}`, `answer.page is null, want boolean`},
	} {
		_, err := thread.Resume(ctx, runtime.Answer(json.RawMessage(c.answer)))
		var re *runtime.ResumeError
		if !errors.Is(err, runtime.ErrAnswerType) || !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("answer %s: %v; want ErrAnswerType saying %q", c.answer, err, c.want)
		}
		open, err := thread.Pending(ctx)
		if err != nil || len(open) != 1 {
			t.Fatalf("after answer %s: open %v, %v; want the interrupt still open", c.answer, open, err)
		}
	}
	if len(got) != 0 {
		t.Fatalf("the node ran with a refused answer: %v", got)
	}
	pend, _ := g.Thread(cp, "esc").Pending(ctx)
	schema := string(pend[0].Expects.Schema)
	for _, want := range []string{`"additionalProperties":false`, `"required":["approved","page"]`} {
		if !strings.Contains(schema, want) {
			t.Errorf("recorded schema lacks %s: %s", want, schema)
		}
	}
	if _, err := thread.Resume(ctx, runtime.Answer(json.RawMessage(`{"approved":true,"page":true}`))); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != `{"approved":true,"page":true}` {
		t.Fatalf("node got %v", got)
	}

	// A pointer answer: null is an answer, and the node sees nil.
	var gotNil []bool
	gp := mustCompile(t, runtime.NewBuilder("maybe").Channel("out", "").
		Node("ask", func(rc *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			e, err := runtime.Interrupt[*escalation](rc, "page someone?")
			if err != nil {
				return nil, err
			}
			gotNil = append(gotNil, e == nil)
			return nil, nil
		}).Edge(spec.Start, "ask"))
	th := gp.Thread(cp, "ptr")
	if _, err := th.Invoke(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := th.Resume(ctx, runtime.Answer(nil)); err != nil {
		t.Fatalf("null to a pointer answer: %v", err)
	}
	if len(gotNil) != 1 || !gotNil[0] {
		t.Fatalf("pointer answer: node saw %v, want nil", gotNil)
	}
}

// TestInterruptRefusesJournaledNull: an answer journaled without the
// check (by an older version, under a looser schema) is checked again when
// the node replays: null does not become the zero value, the answer is
// taken back and the interrupt stays open.
func TestInterruptRefusesJournaledNull(t *testing.T) {
	ctx := context.Background()
	ran := 0
	g := mustCompile(t, runtime.NewBuilder("old").Channel("out", "").
		Node("ask", func(rc *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Interrupt[escalation](rc, "?"); err != nil {
				return nil, err
			}
			ran++
			return nil, nil
		}).Edge(spec.Start, "ask"))
	cp := checkpoint.NewMemory()
	thread := g.Thread(cp, "old")
	if _, err := thread.Invoke(ctx, nil); err != nil {
		t.Fatal(err)
	}
	pend, _ := g.Thread(cp, "old").Pending(ctx)
	j, err := cp.GetJournal(ctx, "old", pend[0].TaskID)
	if err != nil || len(j) != 1 {
		t.Fatalf("journal %v, %v", j, err)
	}
	j[0].Answered, j[0].Value = true, json.RawMessage(`null`)
	if err := cp.PutJournal(ctx, "old", pend[0].TaskID, j); err != nil {
		t.Fatal(err)
	}
	_, err = thread.Resume(ctx, runtime.Answer(nil))
	if !errors.Is(err, runtime.ErrAnswerType) {
		t.Fatalf("replaying a journaled null: %v; want ErrAnswerType", err)
	}
	if ran != 0 {
		t.Fatal("the node ran on with a null answer")
	}
	if open, _ := g.Thread(cp, "old").Pending(ctx); len(open) != 1 {
		t.Fatalf("open %v; want the interrupt open again", open)
	}
}
