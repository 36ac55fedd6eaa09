package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/ilmek-go/ilmek/graphviz"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
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

// browser starts a headless Chromium for a test, ctx bounded by timeout.
func browser(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	exe := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelA)
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelC)
	ctx, cancelT := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancelT)
	return ctx
}

// poll waits until the page's expression is true.
func poll(expr string) chromedp.Action[chromedp.Void] {
	a := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second))
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, tg)
		return chromedp.Void{}, err
	}
}

// failingGraph's one node fails: its runs end with status error.
func failingGraph(t *testing.T) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("fails").
		Channel("x", "").
		TypedNode("boom", "boom", nil, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return nil, errors.New("boom")
		}).
		Edge("__start__", "boom").Edge("boom", "__end__").
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// watchCSP reports every Content-Security-Policy violation of every
// document the tab loads from now on: a listener installed before each
// document's own scripts run (so a violation of the first load counts)
// hands it to Go. Each violation is recorded as "directive blocked-uri at
// source:line"; the returned func lists them, and the channel is sent a
// value at the first one.
func watchCSP(t *testing.T, ctx context.Context) (func() []string, <-chan struct{}) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	first := make(chan struct{}, 1)
	if err := chromedp.Do(ctx,
		chromedp.ExposeFunc("ilmekCSPViolation", func(_ context.Context, v string) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, v)
			select {
			case first <- struct{}{}:
			default:
			}
			return true, nil
		}),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: `document.addEventListener("securitypolicyviolation", (e) => window.ilmekCSPViolation(e.violatedDirective + " " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber));`,
			})
			return err
		}),
	); err != nil {
		t.Fatalf("watching for CSP violations: %v", err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}, first
}

// shotDir is where the console test saves screenshot name: the README's
// (docs/img) with ILMEK_SCREENSHOTS=1 for the ones the README shows, else
// the test's temporary directory tmp.
func shotDir(name, tmp string) string {
	if os.Getenv("ILMEK_SCREENSHOTS") == "1" && readmeShots[name] {
		return filepath.Join("..", "docs", "img")
	}
	return tmp
}

// readmeShots are the screenshots the README shows.
var readmeShots = map[string]bool{"console-question-1280": true, "console-done-360": true}

// TestConsoleInBrowser drives the console in a real headless Chromium, at
// 360 and 1280 px wide, with the Graphviz renderer registered (the diagram
// is SVG): a run pauses; the list filtered to threads waiting on a person
// links to the thread's page; the question shows as text with labelled
// fields (titles and descriptions from the answer type's struct tags); what
// a person types survives two refresh periods (the form is the same
// element); the answer is checked against the schema before it is sent;
// the page confirms the answer and shows the run's result; a done thread
// opened by URL shows the path taken in the diagram and its timeline; a
// fork from the question's checkpoint with another answer ends with that
// answer; back and forward move between the list and the thread; the
// thread is deleted only after a confirmation; a running run is cancelled
// from its page and ends aborted; a run another server on the store holds
// shows as running, and its cancel is refused with what to use instead;
// the list filtered by each status (new, running, interrupted, done,
// error, aborted) lists a thread of it and no other; no page breaks its
// Content-Security-Policy, from the first load on.
func TestConsoleInBrowser(t *testing.T) {
	ctx := browser(t, 180*time.Second)
	// Two servers on one store: the second stands for another process.
	gate := make(chan struct{})
	store := checkpoint.NewMemory()
	both := func(c *Config) {
		c.Graphs = []Graph{Of(approvalGraph(t)), Of(slowGraph(t, gate)), Of(failingGraph(t))}
		c.Checkpointer, c.Authenticate, c.RenderSVG = store, Anonymous, graphviz.New().SVG
	}
	ts, other := newTestServer(t, both), newTestServer(t, both)
	violations, violated := watchCSP(t, ctx)
	shots := t.TempDir()
	var shot func(name string)
	fail := func(step string, err error) {
		t.Helper()
		shot("failed")
		t.Fatalf("%s: %v", step, err)
	}
	shot = func(name string) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		b, err := chromedp.Run(sctx, chromedp.FullScreenshot(60))
		if err != nil {
			t.Logf("screenshot %s: %v", name, err)
			return
		}
		p := filepath.Join(shotDir(name, shots), name+".jpg")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Logf("screenshot %s: %v", name, err)
			return
		}
		t.Logf("screenshot: %s", p)
	}
	js := func(expr string) bool {
		t.Helper()
		b, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err != nil {
			fail("evaluating "+expr, err)
		}
		return b
	}
	str := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			fail("evaluating "+expr, err)
		}
		return s
	}
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	for _, width := range []int64{360, 1280} {
		w := fmt.Sprint(width)
		th := ts.newThread("", map[string]any{"graph": "approval", "metadata": map[string]string{"team": "blog"}})
		var run RunView
		ts.must("", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "otters"}}, 202).json(t, &run)
		if run = ts.wait("", run); run.Status != "interrupted" {
			t.Fatalf("run: %+v", run)
		}
		pid := run.Pending[0].ID

		// The list, filtered to the threads waiting on a person, links to
		// the thread's own page.
		row := `#threads li[data-thread="` + th.ThreadID + `"] a`
		if err := chromedp.Do(ctx,
			chromedp.EmulateViewport(width, 900),
			chromedp.Navigate(ts.URL+"/inbox/?status=interrupted"),
			chromedp.WaitVisible(q(row)),
		); err != nil {
			fail("seeing the waiting thread in the list", err)
		}
		if !js(`document.querySelector('#status-chips input[value="interrupted"]').checked`) {
			t.Error("the list's status filter does not come from the URL")
		}
		if !js(`document.documentElement.scrollWidth <= window.innerWidth`) {
			t.Errorf("%s px: the list overflows sideways (%s px wide)", w, str(`String(document.documentElement.scrollWidth)`))
		}
		shot("console-list-" + w)
		form := `.question[data-id="` + pid + `"] form.answer`
		if err := chromedp.Do(ctx, chromedp.Click(q(row)), chromedp.WaitVisible(q(form+` input[name="note"]`))); err != nil {
			fail("opening the thread from the list", err)
		}
		if loc := str(`location.search`); loc != "?thread="+th.ThreadID {
			t.Errorf("the thread's page is at %q", loc)
		}
		// Back to the list and forward to the thread.
		if err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`void (history.back())`),
			poll(`!document.getElementById("list").hidden && document.getElementById("thread").hidden`),
			chromedp.Evaluate[chromedp.Void](`void (history.forward())`),
			poll(`!document.getElementById("thread").hidden && !!document.querySelector('`+form+`')`),
		); err != nil {
			fail("going back and forward", err)
		}

		// The question as text, the fields labelled from the struct tags.
		labels := str(`[...document.querySelectorAll('` + form + ` label')].map(l => l.textContent).join("|")`)
		if !strings.Contains(labels, "Publish it") || !strings.Contains(labels, "Note to the author") {
			t.Errorf("labels: %q", labels)
		}
		if hint := str(`document.querySelector('` + form + ` .hint').textContent`); !strings.Contains(hint, "Tick to publish") {
			t.Errorf("description: %q", hint)
		}
		if text := str(`document.querySelector('.question[data-id="` + pid + `"] dl.payload').textContent`); !strings.Contains(text, "Publish this draft?") || !strings.Contains(text, "post about otters") {
			t.Errorf("question: %q", text)
		}

		// What is typed survives two refreshes (the page counts the ones
		// it drew): the form is the same element, its values intact.
		if err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`void (document.querySelector('`+form+`').dataset.mark = "kept")`),
			typeInto(q(form+` input[name="note"]`), "looks good"),
			chromedp.Click(q(form+` input[name="approved"]`)),
			chromedp.Evaluate[chromedp.Void](`void (window.typedAt = Number(document.getElementById("thread").dataset.refreshes || 0))`),
			poll(`Number(document.getElementById("thread").dataset.refreshes || 0) >= window.typedAt + 2`),
		); err != nil {
			fail("typing into the answer form", err)
		}
		if got := str(`document.querySelector('` + form + ` input[name="note"]').value`); got != "looks good" {
			t.Errorf("%s px: after two refreshes the note holds %q", w, got)
		}
		if !js(`document.querySelector('` + form + `').dataset.mark === "kept" && document.querySelector('` + form + ` input[name="approved"]').checked`) {
			t.Errorf("%s px: the form was rebuilt or the box unticked across refreshes", w)
		}
		if !js(`document.documentElement.scrollWidth <= window.innerWidth`) {
			t.Errorf("%s px: the thread page overflows sideways (%s px wide)", w, str(`String(document.documentElement.scrollWidth)`))
		}
		shot("console-question-" + w)

		// Answer; the page confirms it and shows the run's result.
		if err := chromedp.Do(ctx,
			chromedp.Click(q(form+` button[type="submit"]`)),
			poll(`document.getElementById("notice").textContent.includes("ended done")`),
			poll(`document.querySelector("#thread-status .status").textContent === "done"`),
		); err != nil {
			fail("answering", err)
		}
		if n := str(`document.getElementById("notice").textContent`); !strings.Contains(n, "Answer sent") || !strings.Contains(n, `"decision":true`) {
			t.Errorf("confirmation: %q", n)
		}
		if js(`!!document.querySelector('` + form + `')`) {
			t.Error("the answered question is still shown")
		}

		// A done thread opened by URL: the path taken, the timeline.
		if err := chromedp.Do(ctx,
			chromedp.Navigate(ts.URL+"/inbox/?thread="+th.ThreadID),
			poll(`document.querySelectorAll("#diagram svg g.node.visited").length >= 4`),
			poll(`document.querySelectorAll("#timeline li").length >= 4`),
			poll(`[...document.querySelectorAll("#events li")].some(li => li.textContent.includes("run_end") && li.textContent.includes("done"))`),
		); err != nil {
			fail("opening the done thread by URL", err)
		}
		for _, n := range []string{"write", "review", "publish", "__end__"} {
			if !js(`!!document.querySelector("#diagram svg g#node_` + n + `.visited")`) {
				t.Errorf("the diagram does not mark %s on the path taken", n)
			}
		}
		tl := str(`document.getElementById("timeline").textContent`)
		for _, want := range []string{"Step 1: write", "Step 2: review", "Step 3: publish", "wrote", "took"} {
			if !strings.Contains(tl, want) {
				t.Errorf("timeline lacks %q: %q", want, tl)
			}
		}
		if !js(`document.documentElement.scrollWidth <= window.innerWidth`) {
			t.Errorf("%s px: the done thread's page overflows sideways", w)
		}
		shot("console-done-" + w)

		// Fork from the question's checkpoint with another answer.
		if err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`void ([...document.querySelectorAll("#timeline li")].find(li => li.textContent.includes("asked review")).querySelector("a").click())`),
			poll(`location.search.includes("&cp=") && !document.getElementById("fork").hidden && document.getElementById("fork-body").dataset.mode === "answers"`),
		); err != nil {
			fail("choosing the question's checkpoint", err)
		}
		if !strings.Contains(str(`document.getElementById("values-at").textContent`), "earlier") {
			t.Error("the channels are not shown as of the earlier checkpoint")
		}
		body := `{"` + pid + `": {"approved": false, "note": "second thoughts"}}`
		if err := chromedp.Do(ctx,
			chromedp.SetValue(q("#fork-body"), body),
			chromedp.Click(q(`#fork-form button[type="submit"]`)),
			chromedp.WaitVisible(q("#confirm-yes")),
		); err != nil {
			fail("asking to fork", err)
		}
		shot("console-fork-" + w)
		if err := chromedp.Do(ctx,
			chromedp.Click(q("#confirm-yes")),
			poll(`document.getElementById("notice").textContent.includes("Forked from step") && document.getElementById("notice").textContent.includes("ended done")`),
		); err != nil {
			fail("forking", err)
		}
		if n := str(`document.getElementById("notice").textContent`); !strings.Contains(n, `"decision":false`) {
			t.Errorf("fork's result: %q", n)
		}
		var got ThreadView
		ts.must("", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
		var v struct {
			Decision bool
			Log      []string
		}
		_ = json.Unmarshal(got.Values, &v)
		if got.Status != "done" || v.Decision || strings.Join(v.Log, " ") != "write review publish" {
			t.Fatalf("%s px: thread after the fork: %s %s", w, got.Status, got.Values)
		}

		// Delete, behind its confirmation: "Keep it" keeps the thread.
		if err := chromedp.Do(ctx,
			chromedp.Click(q("#delete-thread")),
			chromedp.WaitVisible(q("#confirm-no")),
			chromedp.Click(q("#confirm-no")),
			poll(`document.getElementById("confirm").hidden`),
		); err != nil {
			fail("keeping the thread", err)
		}
		ts.must("", "GET", "/threads/"+th.ThreadID, nil, 200)
		if err := chromedp.Do(ctx,
			chromedp.Click(q("#delete-thread")),
			chromedp.WaitVisible(q("#confirm-yes")),
			chromedp.Click(q("#confirm-yes")),
			poll(`!document.getElementById("list").hidden && location.search === ""`),
		); err != nil {
			fail("deleting the thread", err)
		}
		ts.must("", "GET", "/threads/"+th.ThreadID, nil, 404)
	}

	// Cancel a running run from its page: it stops at its superstep
	// boundary (the node in flight finishes) and ends aborted.
	slow := ts.newThread("", map[string]any{"graph": "slow"})
	ts.must("", "POST", "/threads/"+slow.ThreadID+"/runs", map[string]any{"input": map[string]any{"tag": "a"}}, 202).json(t, &RunView{})
	if err := chromedp.Do(ctx,
		chromedp.Navigate(ts.URL+"/inbox/?thread="+slow.ThreadID),
		poll(`document.querySelector("#thread-status .status")?.textContent === "running" && !document.getElementById("cancel-run").hidden`),
		chromedp.Click(q("#cancel-run")),
		chromedp.WaitVisible(q("#confirm-yes")),
		chromedp.Click(q("#confirm-yes")),
		poll(`document.getElementById("notice").textContent.includes("asked to stop")`),
	); err != nil {
		fail("cancelling a running run", err)
	}
	gate <- struct{}{} // the superstep in flight commits; the run stops there
	if err := chromedp.Do(ctx,
		poll(`document.querySelector("#thread-status .status").textContent === "aborted" && document.getElementById("cancel-run").hidden`),
		poll(`[...document.querySelectorAll("#events li")].some(li => li.textContent.includes("run_end") && li.textContent.includes("aborted"))`),
	); err != nil {
		fail("seeing the cancelled run end aborted", err)
	}
	var runs RunList
	ts.must("", "GET", "/threads/"+slow.ThreadID+"/runs", nil, 200).json(t, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].Status != "aborted" {
		t.Errorf("runs after the cancel: %+v", runs)
	}

	// A run another process holds shows as running on the thread's page
	// of this one; its cancel here is refused, naming what to use.
	far := ts.newThread("", map[string]any{"graph": "slow"})
	var farRun RunView
	ts.must("", "POST", "/threads/"+far.ThreadID+"/runs", map[string]any{"input": map[string]any{"tag": "b"}}, 202).json(t, &farRun)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(other.URL+"/inbox/?thread="+far.ThreadID),
		poll(`document.querySelector("#thread-status .status")?.textContent === "running" && !document.getElementById("cancel-run").hidden`),
		chromedp.Click(q("#cancel-run")),
		chromedp.WaitVisible(q("#confirm-yes")),
		chromedp.Click(q("#confirm-yes")),
		poll(`!document.getElementById("thread-error").hidden`),
	); err != nil {
		fail("cancelling another process's run", err)
	}
	if e := str(`document.getElementById("thread-error").textContent`); !strings.Contains(e, "another process") || !strings.Contains(e, "cancel it through that process") {
		t.Errorf("the refused cancel says %q", e)
	}
	ts.must("", "POST", "/threads/"+far.ThreadID+"/runs/"+farRun.RunID+"/cancel?mode=abort", nil, 202)
	if farRun = ts.wait("", farRun); farRun.Status != "aborted" {
		t.Fatalf("the other process's run after its own cancel: %+v", farRun)
	}
	if err := chromedp.Do(ctx, poll(`document.querySelector("#thread-status .status").textContent === "aborted"`)); err != nil {
		fail("seeing the other process's run end", err)
	}

	// Each status the console filters by lists a thread of it, and only
	// threads of it. (Parked threads wait on timers: the API's walk
	// filters by that status too.)
	byStatus := map[string]string{"aborted": far.ThreadID, "new": ts.newThread("", map[string]any{"graph": "approval"}).ThreadID}
	for _, c := range []struct {
		graph, status string
		input         map[string]any
	}{{"approval", "interrupted", map[string]any{"topic": "x"}}, {"fails", "error", nil}, {"slow", "running", map[string]any{"tag": "c"}}} {
		th := ts.newThread("", map[string]any{"graph": c.graph})
		var r RunView
		ts.must("", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": c.input}, 202).json(t, &r)
		if c.status != "running" {
			if r = ts.wait("", r); string(r.Status) != c.status {
				t.Fatalf("%s run: %+v", c.graph, r)
			}
		}
		byStatus[c.status] = th.ThreadID
	}
	running := byStatus["running"]
	filter := func(status, want string) {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.Navigate(ts.URL+"/inbox/?status="+status),
			poll(`!!document.querySelector('#threads li[data-thread="`+want+`"]') && [...document.querySelectorAll("#threads li")].every(li => li.dataset.status === "`+status+`")`),
		); err != nil {
			fail("listing the "+status+" threads", err)
		}
	}
	for status, want := range byStatus {
		filter(status, want)
	}
	close(gate) // the running thread's run goes on to its end
	var list RunList
	ts.must("", "GET", "/threads/"+running+"/runs", nil, 200).json(t, &list)
	if r := ts.wait("", list.Runs[0]); r.Status != "done" {
		t.Fatalf("the slow run after the gate opened: %+v", r)
	}
	filter("done", running)

	// The answer is checked against its schema before it is sent.
	for expr, want := range map[string]string{
		`check({type:"object",properties:{a:{type:"integer"}},required:["a"],additionalProperties:false}, {a: 1.5, b: 1}).join("|")`: "answer.a must be a whole number|answer.b is not a member of the answer",
		`check({type:"object",properties:{a:{type:"boolean"}},required:["a"]}, {}).join("|")`:                                        "answer.a is required",
		`check({type:"string",enum:["low","high"]}, "mid").join("|")`:                                                                `answer must be one of "low", "high"`,
		`check({$defs:{d:{type:"boolean"}},$ref:"#/$defs/d"}, true).join("|")`:                                                       "",
	} {
		if got := str(expr); got != want {
			t.Errorf("%s = %q, want %q", expr, got, want)
		}
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
		if got := str(`JSON.stringify(skeleton(` + schema + `))`); got != want {
			t.Errorf("skeleton(%s) = %s; want %s", schema, got, want)
		}
	}

	// Without a renderer the Mermaid text takes the diagram's place.
	plain := newTestServer(t, func(c *Config) { c.Authenticate = Anonymous })
	pth := plain.newThread("", nil)
	var run RunView
	plain.must("", "POST", "/threads/"+pth.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "x"}}, 202).json(t, &run)
	plain.wait("", run)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(plain.URL+"/inbox/?thread="+pth.ThreadID),
		poll(`(document.querySelector("#diagram pre.mermaid-fallback")?.textContent || "").startsWith("flowchart")`),
	); err != nil {
		fail("seeing the Mermaid text in the diagram's place", err)
	}
	if !js(`document.querySelector("#diagram pre.mermaid-fallback").textContent.includes("class review pending") && !document.querySelector("#diagram svg")`) {
		t.Error("the fallback diagram lacks the pending class, or an SVG is shown")
	}

	// No page broke its Content-Security-Policy, from the first load on;
	// and the watch sees a violation when there is one.
	if v := violations(); len(v) > 0 {
		t.Errorf("Content-Security-Policy violations: %q", v)
	}
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`void document.head.append(Object.assign(document.createElement("script"), {textContent: "window.inlineRan = true"}))`),
	); err != nil {
		fail("adding an inline script", err)
	}
	select {
	case <-violated:
	case <-ctx.Done():
		t.Fatal("an inline script broke the Content-Security-Policy and the watch did not see it")
	}
	if js(`window.inlineRan === true`) {
		t.Error("an inline script ran despite the Content-Security-Policy")
	}
}

// TestConsoleMissingThreadInBrowser: the page of a thread that does not
// exist, or that the principal may not see (another principal's thread
// answers 404 as a missing one does), says so plainly and offers no action
// on it: no Delete or Cancel button, no answer or fork form, no timeline,
// runs or diagram. The page of a thread the principal may see, in the same
// tab, has its actions again.
func TestConsoleMissingThreadInBrowser(t *testing.T) {
	ctx := browser(t, 90*time.Second)
	ts := newTestServer(t, func(c *Config) { c.RenderSVG = graphviz.New().SVG }) // bearer tokens: the token is the principal
	violations, _ := watchCSP(t, ctx)
	ann := ts.newThread("ann", map[string]any{"graph": "approval"})
	var run RunView
	ts.must("ann", "POST", "/threads/"+ann.ThreadID+"/runs", map[string]any{"input": map[string]any{"topic": "otters"}}, 202).json(t, &run)
	if run = ts.wait("ann", run); run.Status != "interrupted" {
		t.Fatalf("run: %+v", run)
	}
	// as makes every request of the tab carry who's bearer token.
	as := func(who string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, tg, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": "Bearer " + who}})
			return err
		})
	}
	str := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluating %s: %v", expr, err)
		}
		return s
	}
	// shown lists what the thread page shows that a person could act on or
	// read as the thread's: visible buttons, forms and the sections below
	// the title.
	const shown = `[...document.querySelectorAll("#thread button, #thread form, #thread textarea, #thread input, #thread .cols")]
		.filter(e => e.getClientRects().length > 0).map(e => e.id || e.className || e.tagName.toLowerCase()).join(",")`
	for _, c := range []struct {
		name, who, id string
	}{
		{"a thread that does not exist", "bob", "nosuch"},
		{"another principal's thread", "bob", ann.ThreadID},
		{"a thread that does not exist, its id to be escaped", "ann", "no such <thread>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := chromedp.Do(ctx,
				as(c.who),
				chromedp.Navigate(ts.URL+"/inbox/?thread="+url.QueryEscape(c.id)),
				poll(`[...document.querySelectorAll("#thread-missing, #thread-error")].some(e => !e.hidden && e.textContent !== "")`),
			); err != nil {
				t.Fatalf("opening the page of thread %q: %v", c.id, err)
			}
			if got := str(shown); got != "" {
				t.Errorf("the page of thread %q, as %s, offers: %s", c.id, c.who, got)
			}
			msg := str(`document.getElementById("thread-missing")?.textContent || ""`)
			if !strings.Contains(msg, "No thread "+c.id) || !strings.Contains(msg, "may not see it") {
				t.Errorf("the page says %q", msg)
			}
			if e := str(`document.getElementById("thread-error").hidden ? "" : document.getElementById("thread-error").textContent`); e != "" {
				t.Errorf("the page also shows an error: %q", e)
			}
			if s := str(`document.getElementById("thread-status").textContent + document.getElementById("thread-graph").textContent`); s != "" {
				t.Errorf("the page shows a status for the missing thread: %q", s)
			}
		})
	}

	// The thread its owner may see, in the same tab: its question, its
	// actions, and no word of a missing thread.
	if err := chromedp.Do(ctx,
		as("ann"),
		chromedp.Navigate(ts.URL+"/inbox/?thread="+url.QueryEscape("nosuch")),
		poll(`!document.getElementById("thread-missing")?.hidden`),
		chromedp.Evaluate[chromedp.Void](`void document.querySelector('a[href="./"]').click()`),
		poll(`!document.getElementById("list").hidden && !!document.querySelector('#threads li[data-thread="`+ann.ThreadID+`"] a')`),
		chromedp.Evaluate[chromedp.Void](`void document.querySelector('#threads li[data-thread="`+ann.ThreadID+`"] a').click()`),
		poll(`!!document.querySelector(".question form.answer") && !document.getElementById("delete-thread").hidden`),
	); err != nil {
		t.Fatalf("opening ann's thread after a missing one: %v", err)
	}
	if got := str(shown); !strings.Contains(got, "delete-thread") || !strings.Contains(got, "cols") {
		t.Errorf("ann's thread page offers %s", got)
	}
	if m := str(`document.getElementById("thread-missing").hidden ? "" : document.getElementById("thread-missing").textContent`); m != "" {
		t.Errorf("ann's thread page says %q", m)
	}
	if v := violations(); len(v) > 0 {
		t.Errorf("Content-Security-Policy violations: %q", v)
	}
}

// typeInto is chromedp.SendKeys for a text field: focus, then keys,
// without SendKeys' unlocked read of the node's attributes (chromedp
// v0.23.1), which the race detector reports while the page rewrites them.
func typeInto[S chromedp.Selectable](sel S, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Focus(sel), chromedp.KeyEvent(text))
}

// TestConsoleAnswersInsideSubgraph drives the console in a headless
// Chromium for a thread paused on an interrupt inside a child graph, with
// the diagram as the Mermaid text and as SVG (Graphviz): the list of
// threads waiting on a person shows the question with the path to the
// child's node; the thread's page draws the expanded diagram (the child
// inside its subgraph node, the child's waiting node marked), lists where
// the child stands, and asks the question with a form; a person answers
// it there; the thread completes with the answer, and no step of the
// child (nor of the parent) ran twice.
func TestConsoleAnswersInsideSubgraph(t *testing.T) {
	for _, svg := range []bool{false, true} {
		t.Run(map[bool]string{false: "mermaid", true: "svg"}[svg], func(t *testing.T) { answerInsideSubgraph(t, svg) })
	}
}

func answerInsideSubgraph(t *testing.T, svg bool) {
	ctx := browser(t, 90*time.Second)
	fx := &effects{}
	ts := newTestServer(t, func(c *Config) {
		c.Graphs, c.Authenticate = []Graph{Of(deskGraph(t, fx, 1))}, Anonymous
		if svg {
			c.RenderSVG = graphviz.New().SVG
		}
	})
	violations, _ := watchCSP(t, ctx)
	js := func(expr string) bool {
		t.Helper()
		b, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err != nil {
			t.Fatalf("evaluating %s: %v", expr, err)
		}
		return b
	}
	str := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluating %s: %v", expr, err)
		}
		return s
	}
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	th := ts.newThread("", map[string]any{"graph": "desk"})
	var run RunView
	ts.must("", "POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"input": map[string]any{"order": "A7"}}, 202).json(t, &run)
	if run = ts.wait("", run); run.Status != runtime.StatusInterrupted {
		t.Fatalf("run: %+v", run)
	}
	const pid = "refund/approve:interrupt#0"
	if len(run.Pending) != 1 || run.Pending[0].ID != pid {
		t.Fatalf("pending: %+v", run.Pending)
	}

	// The list of threads waiting on a person says where the question is.
	row := `#threads li[data-thread="` + th.ThreadID + `"] a`
	if err := chromedp.Do(ctx,
		chromedp.Navigate(ts.URL+"/inbox/?status=interrupted"),
		chromedp.WaitVisible(q(row)),
	); err != nil {
		t.Fatalf("seeing the waiting thread in the list: %v", err)
	}
	if ask := str(`document.querySelector('` + row + ` .ask').textContent`); ask != "1 question from refund › approve" {
		t.Errorf("the list row says %q", ask)
	}

	// The thread's page: the question with its path, the expanded diagram
	// marking the child's waiting node, where the child stands.
	card := `.question[data-id="` + pid + `"]`
	form := card + ` form.answer`
	if err := chromedp.Do(ctx,
		chromedp.Click(q(row)),
		chromedp.WaitVisible(q(form+` input[name="note"]`)),
		poll(`document.getElementById("mermaid").textContent.includes("subgraph refund")`),
		poll(`!!document.querySelector("#diagram svg, #diagram pre.mermaid-fallback")`),
		poll(`!document.getElementById("subgraphs").hidden`),
	); err != nil {
		t.Fatalf("opening the thread: %v", err)
	}
	if h := str(`document.querySelector('` + card + ` h4').textContent`); h != "Question from refund › approve (inside a subgraph)" {
		t.Errorf("the question's heading: %q", h)
	}
	if text := str(`document.querySelector('` + card + ` dl.payload').textContent`); !strings.Contains(text, "Refund this order?") || !strings.Contains(text, "A7") {
		t.Errorf("the question: %q", text)
	}
	labels := str(`[...document.querySelectorAll('` + form + ` label')].map(l => l.textContent).join("|")`)
	if !strings.Contains(labels, "Approve the refund") || !strings.Contains(labels, "Note to the customer") {
		t.Errorf("labels: %q", labels)
	}
	// The Mermaid text (the diagram's place without SVG, and under it).
	diagram := str(`document.getElementById("mermaid").textContent`)
	if !svg && str(`document.querySelector("#diagram pre.mermaid-fallback")?.textContent || ""`) != diagram {
		t.Error("the diagram's place does not hold the Mermaid text")
	}
	if svg {
		// The laid-out SVG: the child a cluster inside its node, marked
		// waiting, and its waiting node marked inside it; the parent's
		// path taken marked too.
		for _, sel := range []string{`#diagram svg g.cluster.pending[id="node_refund"]`, `#diagram svg g.node.pending[id="node_refund/approve"]`,
			`#diagram svg g.node[id="node_refund/pay"]`, `#diagram svg g.node.visited[id="node_intake"]`} {
			if !js(`!!document.querySelector('` + sel + `')`) {
				t.Errorf("the SVG has no %s", sel)
			}
		}
		if js(`!!document.querySelector('#diagram svg g.pending[id="node_refund/check"]')`) {
			t.Error("the SVG marks the child's check node waiting")
		}
	}
	for _, want := range []string{`  subgraph refund ["⏸ refund"]`, `    refund_check["check"]`, `    refund_approve["⏸ approve"]`, `    refund_pay["pay"]`,
		"    refund_approve --> refund_pay", "  end", "  class refund,refund_approve pending"} {
		if !slices.Contains(strings.Split(diagram, "\n"), want) {
			t.Errorf("the diagram lacks %q:\n%s", want, diagram)
		}
	}
	if sub := str(`document.querySelector('#subgraph-list li[data-path="refund"]')?.textContent || ""`); !strings.Contains(sub, "refund") || !strings.Contains(sub, "next approve") || !strings.Contains(sub, "1 question") {
		t.Errorf("where the child stands: %q", sub)
	}

	// A person answers in the browser; the thread runs to its end.
	if err := chromedp.Do(ctx,
		typeInto(q(form+` input[name="note"]`), "sorry for the wait"),
		chromedp.Click(q(form+` input[name="approved"]`)),
		chromedp.Click(q(form+` button[type="submit"]`)),
		poll(`document.getElementById("notice").textContent.includes("ended done")`),
		poll(`document.querySelector("#thread-status .status").textContent === "done"`),
		poll(`document.getElementById("subgraphs").hidden && !document.querySelector('`+card+`')`),
		poll(`!document.getElementById("mermaid").textContent.includes("pending") && !document.querySelector("#diagram svg g.pending")`),
	); err != nil {
		t.Fatalf("answering: %v", err)
	}
	// The resume's events show the child's progress, by its path.
	if err := chromedp.Do(ctx, poll(`[...document.querySelectorAll("#events li")].some(li => li.textContent.includes("node_end") && li.textContent.includes("pay in refund"))`)); err != nil {
		t.Errorf("the events do not show the child's pay node ending: %v", err)
	}
	if n := str(`document.getElementById("notice").textContent`); !strings.Contains(n, `"refund_status":"approved"`) {
		t.Errorf("confirmation: %q", n)
	}
	var got ThreadView
	ts.must("", "GET", "/threads/"+th.ThreadID, nil, 200).json(t, &got)
	var v struct {
		RefundStatus string   `json:"refund_status"`
		Log          []string `json:"log"`
	}
	if err := json.Unmarshal(got.Values, &v); err != nil {
		t.Fatal(err)
	}
	if got.Status != runtime.StatusDone || v.RefundStatus != "approved" || strings.Join(v.Log, "|") != "intake|reply: approved" {
		t.Errorf("thread after the answer: %s %s", got.Status, got.Values)
	}
	for name, want := range map[string]int{"intake": 1, "lookup": 1, "pay": 1, "reply": 1} {
		if n := fx.get(name); n != want {
			t.Errorf("%s ran %d times, want %d", name, n, want)
		}
	}
	if got := js(`!!document.querySelector("#diagram svg")`); got != svg {
		t.Errorf("an SVG shown: %v; the server draws one: %v", got, svg)
	}
	if v := violations(); len(v) > 0 {
		t.Errorf("Content-Security-Policy violations: %q", v)
	}
}
