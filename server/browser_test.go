package server

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ilmek-go/ilmek/graphviz"
)

// chromium finds a Chromium to drive: skipped with a notice when there is
// none, except under CI=true, where the browser test must run.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium found and CI=true: install it (apt-get install -y chromium; .ci/run does)")
	}
	t.Skip("browser test skipped: no Chromium installed (apt-get install -y chromium to run it)")
	return ""
}

// TestInboxInBrowser drives the inbox in a real headless Chromium: a run
// pauses, the inbox shows the interrupt and its form (fields from the
// answer's JSON Schema), a person answers, and the page shows the thread
// finished and the diagram's highlight gone. The Graphviz renderer is
// registered, so the diagram is SVG.
func TestInboxInBrowser(t *testing.T) {
	exe := chromium(t)
	ts := newTestServer(t, func(c *Config) { c.Authenticate, c.RenderSVG = Anonymous, graphviz.New().SVG })
	th := ts.newThread("", map[string]any{"graph": "approval"})
	var run RunView
	ts.must("", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "otters"}}, 202).json(t, &run)
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

	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	fail := func(step string, err error) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if shot, serr := chromedp.Run(sctx, chromedp.FullScreenshot(90)); serr == nil {
			p := filepath.Join(t.TempDir(), "inbox.jpg")
			if os.WriteFile(p, shot, 0o644) == nil {
				t.Logf("screenshot: %s", p)
			}
		}
		t.Fatalf("%s: %v", step, err)
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(q(sel)))
		if err != nil {
			fail("reading "+sel, err)
		}
		return s
	}
	js := func(expr string) bool {
		t.Helper()
		b, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err != nil {
			fail("evaluating "+expr, err)
		}
		return b
	}
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		a := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second))
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := a(ctx, tg)
			return chromedp.Void{}, err
		}
	}

	card := `li.card[data-thread="` + th.ThreadID + `"]`
	if err := chromedp.Do(ctx,
		chromedp.Navigate(ts.URL+"/inbox/"),
		chromedp.WaitVisible(q(card+` form.answer input[name="approved"]`)),
		chromedp.WaitReady(q(`#diagram svg g.node.pending`)),
	); err != nil {
		fail("seeing the interrupt", err)
	}
	if payload := text(card + " pre"); !strings.Contains(payload, "Publish this draft?") || !strings.Contains(payload, "post about otters") {
		t.Errorf("payload shown: %q", payload)
	}
	if !js(`!!document.querySelector("#diagram svg g#node_review.pending")`) {
		t.Error("the diagram does not highlight review as pending")
	}
	if m := text("#mermaid"); !strings.Contains(m, "class review pending") {
		t.Errorf("Mermaid text: %q", m)
	}

	// A JSON answer box starts from a skeleton of the answer's schema,
	// never null.
	for schema, want := range map[string]string{
		`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"array","items":{"type":"string"}},"c":{"type":["string","null"]},"d":{"type":"object","properties":{"e":{"type":"boolean"}},"required":["e"],"additionalProperties":false}},"required":["a","b","d"],"additionalProperties":false}`: `{"a":0,"b":[],"c":null,"d":{"e":false}}`,
		`{"type":"array","items":{"type":"object"}}`:             `[]`,
		`{"type":"string","enum":["low","high"]}`:                `"low"`,
		`{"type":["number","null"]}`:                             `0`,
		`{"type":"object","properties":{"n":{"type":"string"}}}`: `{"n":""}`,
		`{}`: `{}`,
		`{"anyOf":[{"type":"null"},{"type":"object","properties":{}}]}`: `{}`,
	} {
		if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(skeleton(`+schema+`))`)); err != nil || got != want {
			t.Errorf("skeleton(%s) = %s, %v; want %s", schema, got, err, want)
		}
	}

	box := `formFor("t", {id: "x", node: "n", expects: {type: "T", schema: {type: "object", properties: {to: {type: "array"}, page: {type: "boolean"}}, required: ["to", "page"]}}}).querySelector("textarea").value`
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](box)); err != nil || strings.Join(strings.Fields(got), "") != `{"to":[],"page":false}` {
		t.Errorf("a nested answer's box starts with %q, %v", got, err)
	}

	if err := chromedp.Do(ctx,
		chromedp.Click(q(card+` input[name="approved"]`)),
		chromedp.SendKeys(q(card+` input[name="note"]`), "looks good"),
		chromedp.Click(q(card+` form.answer button[type="submit"]`)),
		poll(`document.getElementById("thread-status").textContent.startsWith("idle")`),
		poll(`[...document.querySelectorAll("#events li")].some(li => li.textContent.includes("run_end done"))`),
		poll(`!document.querySelector("#diagram svg g.node.pending")`),
	); err != nil {
		fail("answering", err)
	}
	if js(`!!document.querySelector("#diagram svg g.node.pending")`) || !js(`!!document.querySelector("#diagram svg g#node___end__")`) {
		t.Error("the diagram still shows a pending node, or no END")
	}
	if events := text("#events"); !strings.Contains(events, "node_end publish") {
		t.Errorf("events: %q", events)
	}

	// Without a renderer the Mermaid text takes the diagram's place.
	plain := newTestServer(t, func(c *Config) { c.Authenticate = Anonymous })
	pth := plain.newThread("", nil)
	plain.must("", "POST", "/threads/"+pth.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "x"}}, 202).json(t, &run)
	plain.wait("", run)
	// (Read in one evaluation: the page redraws the diagram as events
	// arrive, so a node found by one call may be gone at the next.)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(plain.URL+"/inbox/"),
		poll(`(document.querySelector("#diagram pre.mermaid-fallback")?.textContent || "").startsWith("flowchart")`),
	); err != nil {
		fail("seeing the Mermaid text in the diagram's place", err)
	}
	if !js(`document.querySelector("#diagram pre.mermaid-fallback").textContent.includes("class review pending") && !document.querySelector("#diagram svg")`) {
		t.Error("the fallback diagram lacks the pending class, or an SVG is shown")
	}

	var got ThreadView
	ts.must("", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
	var v struct {
		Decision bool
		Log      []string
	}
	_ = json.Unmarshal(got.Values, &v)
	if got.Status != "done" || !v.Decision || strings.Join(v.Log, " ") != "write review publish" {
		t.Fatalf("thread after the browser's answer: %s %s", got.Status, got.Values)
	}
}
