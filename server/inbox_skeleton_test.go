package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ilmek-go/ilmek/runtime"
)

// escalation is an answer the inbox cannot show as a flat form (it nests),
// so it gets a JSON answer box.
type escalation struct {
	Page   bool     `json:"page"`
	Who    []string `json:"who"`
	Reason struct {
		Code int    `json:"code"`
		Note string `json:"note,omitempty"`
	} `json:"reason"`
}

// TestInboxJSONAnswerStartsFromSkeleton: the JSON answer box starts from
// the answer schema's skeleton (every required member, empty values of its
// type), never from null, which the runtime refuses for a struct answer;
// pressing Answer on an untouched box is an explicit "page": false. An
// answer the schema refuses is not sent.
func TestInboxJSONAnswerStartsFromSkeleton(t *testing.T) {
	exe := chromium(t)
	g, err := runtime.NewBuilder("escalate").Channel("out", "").
		TypedNode("ask", "ask", nil, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			e, err := runtime.Interrupt[escalation](ctx, "page someone?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"out": e.Page}, nil
		}).
		Edge("__start__", "ask").Edge("ask", "__end__").Compile()
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, func(c *Config) { c.Authenticate, c.Graphs = Anonymous, []Graph{Of(g)} })
	th := ts.newThread("", map[string]any{"graph": "escalate"})
	var run RunView
	ts.must("", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{}, 202).json(t, &run)
	if run = ts.wait("", run); run.Status != "interrupted" {
		t.Fatalf("run: %+v", run)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer cancelC()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	area := `.question form.answer textarea[name="answer"]`
	var text string
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/inbox/?thread="+th.ThreadID), chromedp.WaitVisible(chromedp.CSS(area))); err != nil {
		t.Fatalf("seeing the answer box: %v", err)
	}
	text, err = chromedp.Run(ctx, chromedp.Value(chromedp.CSS(area)))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("the answer box holds %q: %v", text, err)
	}
	want := `{"page":false,"reason":{"code":0,"note":""},"who":[]}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("the answer box starts from %s, want %s", b, want)
	}

	// An answer the schema refuses is not sent: the form says why.
	poll := chromedp.Poll[bool](`(document.querySelector(".question form.answer .error")?.textContent || "").includes("answer.page must be a boolean")`, chromedp.WithPollingTimeout(10*time.Second))
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(area), `{"page": "yes", "who": [], "reason": {"code": 1}}`),
		chromedp.Click(chromedp.CSS(`.question form.answer button[type="submit"]`)),
		func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := poll(ctx, tg)
			return chromedp.Void{}, err
		},
	); err != nil {
		t.Fatalf("a wrong answer: %v", err)
	}
	var th2 ThreadView
	ts.must("", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &th2)
	if th2.Status != "interrupted" || th2.LastRunID != run.RunID {
		t.Errorf("a wrong answer reached the server: %s, last run %s", th2.Status, th2.LastRunID)
	}
}
