package studio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/spec"
	"github.com/ilmek-go/ilmek/studio"
)

// chromium finds a Chromium to drive: skipped with a notice when there is
// none, except under CI=true, where the browser tests must run.
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

// browser drives one headless Chromium page for a test.
type browser struct {
	t   *testing.T
	ctx context.Context
}

func newBrowser(t *testing.T) *browser {
	exe := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1400, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelA)
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelC)
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelT)
	return &browser{t: t, ctx: ctx}
}

// fail ends the test with a screenshot of the page for the log.
func (b *browser) fail(step string, err error) {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if shot, serr := chromedp.Run(sctx, chromedp.CaptureScreenshot()); serr == nil {
		p := filepath.Join(os.TempDir(), b.t.Name()+".png")
		if os.WriteFile(p, shot, 0o644) == nil {
			b.t.Logf("screenshot: %s", p)
		}
	}
	b.t.Fatalf("%s: %v", step, err)
}

// typeInto is chromedp.SendKeys for a text field: focus, then keys. It
// does not read the node's attributes, which chromedp v0.23.1's SendKeys
// reads without its lock while a DOM event rewrites them (the race
// detector's report in a CI run of TestStudioBuildsAGraph).
func typeInto[S chromedp.Selectable](sel S, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Focus(sel), chromedp.KeyEvent(text))
}

func (b *browser) do(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.fail(step, err)
	}
}

func poll(expr string) chromedp.Action[chromedp.Void] {
	a := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second))
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, tg)
		return chromedp.Void{}, err
	}
}

// settled waits until the canvas's viewport has stopped moving: its
// transform is the same over five polls in a row (a fit or zoom animates
// it over several frames), instead of sleeping for a guessed time.
func settled() chromedp.Action[chromedp.Void] {
	return poll(`(() => {
		const t = document.querySelector(".react-flow__viewport")?.style.transform;
		window.__studioSame = (t !== undefined && t === window.__studioLast) ? (window.__studioSame || 0) + 1 : 0;
		window.__studioLast = t;
		return window.__studioSame >= 5;
	})()`)
}

func eval(expr string) chromedp.Action[chromedp.Void] {
	a := chromedp.Evaluate[bool](expr)
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, tg)
		return chromedp.Void{}, err
	}
}

// choose picks an option of a select the way a person does (React sees
// a change event).
func choose(sel, value string) chromedp.Action[chromedp.Void] {
	return eval(fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q; s.dispatchEvent(new Event("change", {bubbles: true})); return s.value === %q })()`, sel, value, value))
}

// str evaluates the JavaScript expr in the page, a string.
func (b *browser) str(expr string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		b.fail("evaluating "+expr, err)
	}
	return v
}

// center is the viewport point at the middle of the element sel finds,
// moved by dx, dy.
func (b *browser) center(sel string, dx, dy float64) (float64, float64) {
	b.t.Helper()
	xy, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2] })()`, sel)))
	if err != nil || len(xy) != 2 {
		b.fail("finding "+sel, err)
	}
	return xy[0] + dx, xy[1] + dy
}

// drag drags from the middle of one element to a point (a native drag
// when the element is draggable, a mouse drag otherwise).
func (b *browser) drag(step, from string, toX, toY float64) {
	b.t.Helper()
	x, y := b.center(from, 0, 0)
	b.do(step, chromedp.DragAndDropXY(x, y, toX, toY, 12))
}

// shot saves a screenshot for the README when ILMEK_STUDIO_SCREENSHOTS
// names a directory.
func (b *browser) shot(name string) {
	dir := os.Getenv("ILMEK_STUDIO_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Error(err)
	}
}

func browserStudio(t *testing.T, cp runtime.Checkpointer) (*httptest.Server, studio.Repository) {
	repo := studio.NewMemory()
	s, err := studio.New(studio.Config{Repository: repo, Registry: registry(), NodeTypes: nodeTypes(), Checkpointer: cp,
		Authenticate: server.Anonymous, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, repo
}

const node = `.react-flow__node[data-id="%s"]`

// connect drags from one node's source handle to another's target handle
// until the canvas has want edges. The view is fitted and zoomed out
// first, so no handle is near the pane's edge, where the canvas pans
// while a connection is dragged; a drag that still misses is retried.
func (b *browser) connect(from, to string, want int) {
	b.t.Helper()
	done := fmt.Sprintf(`document.querySelectorAll(".react-flow__edge").length === %d`, want)
	for range 3 {
		b.do("fitting the view", chromedp.Click(chromedp.CSS(".react-flow__controls-fitview")),
			chromedp.Click(chromedp.CSS(".react-flow__controls-zoomout")), settled())
		x, y := b.center(fmt.Sprintf(node+" .react-flow__handle.target", to), 0, 0)
		b.drag("connecting "+from+" to "+to, fmt.Sprintf(node+" .react-flow__handle.source", from), x, y)
		if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](done, chromedp.WithPollingTimeout(3*time.Second))); err == nil {
			return
		}
		b.t.Logf("retrying: the drag from %s to %s missed", from, to)
	}
	b.fail("connecting "+from+" to "+to, fmt.Errorf("the canvas does not have %d edges", want))
}

// selectNode clicks a node on the canvas until the inspector shows it: a
// click can land before the canvas has fitted its view and miss.
func (b *browser) selectNode(id string) {
	b.t.Helper()
	sel := fmt.Sprintf(node, id)
	shown := fmt.Sprintf(`document.querySelector(".inspector h2 code")?.textContent === %q`, id)
	for range 5 {
		b.do("clicking "+id, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
		a := chromedp.Poll[bool](shown, chromedp.WithPollingTimeout(3*time.Second))
		if _, err := chromedp.Run(b.ctx, a); err == nil {
			return
		}
		b.t.Logf("retrying: the click on %s missed", id)
	}
	b.fail("selecting "+id, fmt.Errorf("the inspector does not show node %s", id))
}

// clickUntil clicks sel until done holds (3 s after each click, 5 clicks
// at most). A click right after a drag on the canvas can be swallowed:
// d3-drag, under React Flow, stops the click event that follows a drag
// (TestStudioBuildsAGraph's save after moving a node failed that way,
// every time, with Chromium 156).
func (b *browser) clickUntil(step, sel, done string) {
	b.t.Helper()
	for range 5 {
		b.do(step, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
		if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](done, chromedp.WithPollingTimeout(3*time.Second))); err == nil {
			return
		}
		b.t.Logf("retrying: the click on %s did nothing", sel)
	}
	b.fail(step, fmt.Errorf("%s does not hold after 5 clicks on %s", done, sel))
}

// TestStudioBuildsAGraph builds a graph in Chromium from an empty canvas:
// drags two node types from the palette, connects __start__ -> say ->
// say_2 -> __end__ by their handles, adds a guarded edge through the
// form, sees the placed error of a wrong literal and fixes it, fills the
// config forms, and publishes. The published document builds with
// runtime.FromSpec and round-trips with ToSpec; moving a node and saving
// keeps the fingerprint.
func TestStudioBuildsAGraph(t *testing.T) {
	b := newBrowser(t)
	ts, repo := browserStudio(t, nil)
	b.do("opening the studio",
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#new-name")),
		eval(`window.cspViolations = []; document.addEventListener("securitypolicyviolation", e => cspViolations.push(e.violatedDirective + " " + e.blockedURI)); true`),
		typeInto(chromedp.CSS("#new-name"), "built"),
		chromedp.Click(chromedp.CSS("#new-doc")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(node, "__end__"))),
	)
	b.do("declaring channels",
		typeInto(chromedp.CSS("#channel-name"), "n"),
		chromedp.Click(chromedp.CSS("#channel-add")),
		typeInto(chromedp.CSS("#channel-name"), "log"),
		chromedp.Click(chromedp.CSS("#channel-add")),
		poll(`!!document.querySelector('[aria-label="reducer of log"]')`),
		choose(`[aria-label="reducer of log"]`, "append"),
	)

	// Drag two node types from the palette onto the canvas.
	px, py := b.center(".react-flow__pane", 0, 0)
	b.drag("dragging say", `.palette-item[data-type="say"]`, px-260, py+40)
	b.do("seeing say", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(node, "say"))))
	b.drag("dragging say again", `.palette-item[data-type="say"]`, px+260, py+40)
	b.do("seeing say_2", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(node, "say_2"))),
		chromedp.Click(chromedp.CSS(".react-flow__controls-fitview")), settled())

	// Connect the handles: __start__ -> say -> say_2 -> __end__.
	for i, c := range [][2]string{{"__start__", "say"}, {"say", "say_2"}, {"say_2", "__end__"}} {
		b.connect(c[0], c[1], i+1)
	}
	b.do("fitting the view", chromedp.Click(chromedp.CSS(".react-flow__controls-fitview")), settled())
	b.shot("studio-canvas")

	// A guarded edge through the form, first with a wrong literal.
	b.do("adding a guarded edge",
		chromedp.Click(chromedp.CSS(".react-flow__pane"), chromedp.NodeVisible),
		choose("#edge-from", "say"), choose("#edge-to", "__end__"),
		chromedp.Click(chromedp.CSS("#edge-add")),
		chromedp.Click(chromedp.CSS(`.edge-list button[data-edge="3"]`)),
		chromedp.WaitVisible(chromedp.CSS("#guard-apply")),
		choose("#guard-channel", "n"), choose("#guard-op", "gt"), choose("#guard-kind", "number"),
		typeInto(chromedp.CSS("#guard-value"), "five"),
		chromedp.Click(chromedp.CSS("#guard-apply")),
		poll(`[...document.querySelectorAll(".inspector .placed .diag.error")].some(e => e.textContent.includes("gt"))`),
		poll(`!!document.querySelector(".react-flow__edge.edge-bad")`),
	)
	b.shot("studio-diagnostic")
	b.do("fixing the literal",
		eval(`(() => { const i = document.querySelector("#guard-value"); Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(i, ""); i.dispatchEvent(new Event("input", {bubbles: true})); return true })()`),
		typeInto(chromedp.CSS("#guard-value"), "5"),
		chromedp.Click(chromedp.CSS("#guard-apply")),
		poll(`!document.querySelector(".react-flow__edge.edge-bad") && !document.querySelector(".inspector .placed")`),
	)

	// The config forms: the empty text is an error on the node until filled.
	for _, c := range [][2]string{{"say", "hello"}, {"say_2", "bye"}} {
		b.do("seeing "+c[0]+"'s error", poll(fmt.Sprintf(`!!document.querySelector('%s .gnode.has-error')`, fmt.Sprintf(node, c[0]))))
		b.selectNode(c[0])
		b.do("filling "+c[0]+"'s config",
			chromedp.WaitVisible(chromedp.CSS("#cfg-text")),
			typeInto(chromedp.CSS("#cfg-text"), c[1]+"\r"),
			poll(fmt.Sprintf(`!document.querySelector('%s .gnode.has-error')`, fmt.Sprintf(node, c[0]))),
		)
		if c[0] == "say" {
			b.shot("studio-config")
		}
	}
	b.do("publishing",
		poll(`!!document.querySelector(".diagnostics .badge.ok")`),
		chromedp.Click(chromedp.CSS("#publish")),
		chromedp.WaitVisible(chromedp.CSS("#publish-confirm")),
		poll(`!document.querySelector("#publish-confirm").disabled`),
		chromedp.Click(chromedp.CSS("#publish-confirm")),
		poll(`document.querySelector("#status").textContent.startsWith("Published version 1")`),
	)

	if got, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`cspViolations`)); err != nil || len(got) != 0 {
		t.Errorf("the page broke its Content-Security-Policy: %v %v", got, err)
	}

	ctx := context.Background()
	v, err := repo.Published(ctx, "built")
	if err != nil {
		t.Fatal(err)
	}
	doc, diags := spec.Decode("built.json", v.Body)
	if diags.HasErrors() {
		t.Fatalf("the published document: %v\n%s", diags.Err(), v.Body)
	}
	g, err := runtime.FromSpec(doc, registry())
	if err != nil {
		t.Fatal(err)
	}
	back, err := runtime.ToSpec(g)
	if err != nil || !bytes.Equal(back.Encode(), v.Body) {
		t.Fatalf("ToSpec round trip (%v):\n%s\nwant\n%s", err, back.Encode(), v.Body)
	}
	var edges []string
	for _, e := range doc.Edges {
		s := e.From + "->" + e.To
		if e.When != nil {
			s += "?" + string(e.When.Op) + ":" + e.When.Channel
		}
		edges = append(edges, s)
	}
	if got := strings.Join(edges, " "); got != "__start__->say say->say_2 say_2->__end__ say->__end__?gt:n" {
		t.Errorf("edges %s", got)
	}
	if c, _ := doc.Channel("log"); c.Reducer != spec.Append || len(doc.Nodes) != 2 || !strings.Contains(string(doc.Nodes[0].Config), "hello") {
		t.Errorf("the published document:\n%s", v.Body)
	}

	// Moving a node changes only its x-studio member, not the fingerprint.
	x, y := b.center(fmt.Sprintf(node, "say_2"), 0, 0)
	b.drag("moving say_2", fmt.Sprintf(node, "say_2"), x+60, y+80)
	b.clickUntil("saving the move", "#save", `document.querySelector("#status").textContent.startsWith("Saved revision")`)
	// Saved is saved: the header no longer says unsaved (it did, for good,
	// when the stored canonical form ordered keys unlike the canvas).
	b.do("seeing the draft saved", poll(`!document.querySelector("header .meta").textContent.includes("unsaved")`))
	d, err := repo.Get(ctx, v.Document)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := repo.Revision(ctx, d.ID, d.Revision)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(rev.Body, v.Body) || rev.Fingerprint != v.Fingerprint {
		t.Fatalf("after the move: fingerprint %s (published %s), body changed %v", rev.Fingerprint, v.Fingerprint, !bytes.Equal(rev.Body, v.Body))
	}
}

// TestStudioPublishReviewInBrowser opens a published document with a
// paused thread, removes the node the thread waits in, and sees the
// unsafe change and the affected thread before it can publish.
func TestStudioPublishReviewInBrowser(t *testing.T) {
	b := newBrowser(t)
	ctx := context.Background()
	cp := checkpoint.NewMemory()
	ts, repo := browserStudio(t, cp)
	var made studio.DocumentView
	s := &testStudio{t: t, ts: ts}
	s.must("", "POST", "/api/documents", map[string]any{"name": "paused", "source": paused}, 201).json(t, &made)
	s.must("", "POST", "/api/documents/"+made.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)
	v, err := repo.Published(ctx, "paused")
	if err != nil {
		t.Fatal(err)
	}
	g, err := runtime.Load("paused.json", v.Body, registry())
	if err != nil {
		t.Fatal(err)
	}
	if res, err := g.Thread(cp, "t1").Invoke(ctx, runtime.Values{}); err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("pausing t1: %v %v", res.Status, err)
	}

	b.do("opening the document",
		chromedp.Navigate(ts.URL+"/"),
		poll(`document.querySelectorAll('[aria-label="Document"] option').length === 2`),
		choose(`[aria-label="Document"]`, made.ID),
		chromedp.WaitVisible(chromedp.CSS(".react-flow__node")), settled(),
	)
	b.selectNode("ask")
	b.do("removing ask",
		chromedp.Click(chromedp.CSS(".inspector button.danger")),
		chromedp.WaitNotPresent(chromedp.CSS(fmt.Sprintf(node, "ask"))),
		choose("#edge-from", "__start__"), choose("#edge-to", "say"),
		chromedp.Click(chromedp.CSS("#edge-add")),
		poll(`!!document.querySelector(".diagnostics .badge.ok")`),
		chromedp.Click(chromedp.CSS("#publish")),
		chromedp.WaitVisible(chromedp.CSS(`.affected li[data-thread="t1"]`)),
	)
	b.shot("studio-review")
	b.do("reading the review",
		poll(`[...document.querySelectorAll(".changes tr.unsafe")].some(r => r.textContent.includes("ask"))`),
		poll(`document.querySelector('.affected li[data-thread="t1"]').textContent.includes("cannot continue")`),
		poll(`document.querySelector("#publish-confirm").disabled`),
		chromedp.Click(chromedp.CSS("#confirm-unsafe")),
		poll(`!document.querySelector("#publish-confirm").disabled`),
		chromedp.Click(chromedp.CSS("#publish-confirm")),
		poll(`document.querySelector("#status").textContent.startsWith("Published version 2")`),
	)
	v2, err := repo.Published(ctx, "paused")
	if err != nil || v2.Number != 2 || bytes.Contains(v2.Body, []byte(`"ask"`)) {
		t.Fatalf("published %+v %v", v2, err)
	}
}

// TestStudioKeepsNumberLiterals: editing a document in the page keeps the
// text of the number literals the edit did not touch (1.0, 1e3, an
// integer past 2^53), which JSON.parse and JSON.stringify alone would
// rewrite as 1, 1000 and 12345678901234567000.
func TestStudioKeepsNumberLiterals(t *testing.T) {
	b := newBrowser(t)
	ts, _ := browserStudio(t, nil)
	src := strings.Replace(chain, `"x-tool":{"kept":true}`, `"x-tool":{"kept":true,"big":12345678901234567890,"f":1.0,"e":1e3}`, 1)
	src = strings.Replace(src, `{"from":"a","to":"b"}`, `{"from":"a","to":"b","when":{"channel":"n","gt":1.0}}`, 1)
	literals := []string{`12345678901234567890`, `"f": 1.0`, `"e": 1e3`, `"gt": 1.0`}
	s := &testStudio{t: t, ts: ts}
	var made studio.DocumentView
	s.must("", "POST", "/api/documents", map[string]any{"name": "literals", "source": src}, 201).json(t, &made)
	for _, l := range literals {
		if !strings.Contains(made.Source, l) {
			t.Fatalf("the stored document lacks %s before any edit: %s", l, made.Source)
		}
	}
	b.do("opening the document",
		chromedp.Navigate(ts.URL+"/"),
		poll(`document.querySelectorAll('[aria-label="Document"] option').length === 2`),
		choose(`[aria-label="Document"]`, made.ID),
		chromedp.WaitVisible(chromedp.CSS(".react-flow__node")), settled(),
	)
	b.selectNode("b")
	b.do("removing b and saving",
		chromedp.Click(chromedp.CSS(".inspector button.danger")),
		chromedp.WaitNotPresent(chromedp.CSS(fmt.Sprintf(node, "b"))),
		poll(`document.querySelector("header .meta").textContent.includes("unsaved")`),
		chromedp.Click(chromedp.CSS("#save")),
		poll(`document.querySelector("#status").textContent.startsWith("Saved revision")`),
	)
	var saved studio.DocumentView
	s.must("", "GET", "/api/documents/"+made.ID, nil, 200).json(t, &saved)
	if saved.Revision < 2 || strings.Contains(saved.Source, `"id": "b"`) {
		t.Fatalf("the edit was not saved: revision %d: %s", saved.Revision, saved.Source)
	}
	for _, l := range literals[:3] {
		if !strings.Contains(saved.Source, l) {
			t.Errorf("the saved document lost the literal %s: %s", l, saved.Source)
		}
	}
}

// crowded is a document laid out by the canvas's defaults (no x-studio
// member: one column, a node every 120 px) whose nodes carry long
// diagnostics: b's config has keys the say type does not take, c's type
// is not registered, and d runs a graph that is not published.
const crowded = `{"name":"crowded","channels":{"log":{"reducer":"append"}},
 "nodes":[{"id":"a","type":"say","config":{"text":"hello"}},
          {"id":"b","type":"say","config":{"text":"hi","the_first_setting_that_no_field_takes":1,"the_second_setting_that_no_field_takes":2,"teh_text":"typo"}},
          {"id":"c","type":"a_node_type_that_the_application_does_not_register_anywhere"},
          {"id":"d","type":"subgraph","config":{"graph":"a_child_graph_that_nobody_has_published_in_this_studio"}},
          {"id":"e","type":"say","config":{"text":"bye"}}],
 "edges":[{"from":"__start__","to":"a"},{"from":"a","to":"b"},{"from":"b","to":"c"},{"from":"c","to":"d"},{"from":"d","to":"e"},{"from":"e","to":"__end__"}]}`

// TestStudioDiagnosticsInsideNodes: a long diagnostic drawn inside a node
// keeps to the node's box: it is cut to one line there, its full text in
// the node's tooltip and in the inspector, so the node does not grow over
// its neighbours: no two nodes' bounding boxes intersect, and a node is as
// wide with its diagnostic as without it and at most one line taller.
func TestStudioDiagnosticsInsideNodes(t *testing.T) {
	b := newBrowser(t)
	ts, _ := browserStudio(t, nil)
	s := &testStudio{t: t, ts: ts}
	var made studio.DocumentView
	s.must("", "POST", "/api/documents", map[string]any{"name": "crowded", "source": crowded}, 201).json(t, &made)
	if made.Report.Errors < 3 {
		t.Fatalf("crowded has %d errors: %+v", made.Report.Errors, made.Report.Diagnostics)
	}
	b.do("opening the document",
		chromedp.Navigate(ts.URL+"/"),
		poll(`document.querySelectorAll('[aria-label="Document"] option').length === 2`),
		choose(`[aria-label="Document"]`, made.ID),
		poll(`document.querySelectorAll(".react-flow__node").length === 7`),
		poll(`document.querySelectorAll(".gnode.has-error").length === 3`),
		chromedp.Click(chromedp.CSS(".react-flow__controls-fitview")), settled(),
	)

	// Each node's bounding box (left, top, right, bottom), and for a node
	// with a diagnostic its size without it (the diagnostic hidden for the
	// measure) and the diagnostic's font size, all on screen (zoomed).
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(() => {
		const box = (n) => { const r = n.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
		const nodes = [...document.querySelectorAll(".react-flow__node")];
		const zoom = Number((/scale\(([^)]+)\)/.exec(document.querySelector(".react-flow__viewport").style.transform) || [0, 1])[1]);
		const out = {};
		for (const n of nodes) {
			const d = n.querySelector(".gnode-diag");
			out[n.dataset.id] = { box: box(n), drawn: box(n.querySelector(".gnode")) };
			if (d) out[n.dataset.id].font = parseFloat(getComputedStyle(d).fontSize) * zoom;
		}
		// The canvas keeps a node's measured size on its wrapper: measure
		// what is drawn inside it. (The CSP refuses a <style> element; the
		// CSSOM hides the diagnostics.)
		const diags = [...document.querySelectorAll(".gnode-diag")];
		for (const d of diags) d.style.display = "none";
		for (const n of nodes) out[n.dataset.id].bare = box(n.querySelector(".gnode"));
		for (const d of diags) d.style.display = "";
		return JSON.stringify(out);
	})()`))
	if err != nil {
		b.fail("measuring the nodes", err)
	}
	var got map[string]struct {
		Box, Drawn, Bare [4]float64
		Font             float64
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	ids := slices.Sorted(maps.Keys(got))
	for i, p := range ids {
		for _, q := range ids[i+1:] {
			x, y := got[p].Box, got[q].Box
			if x[0] < y[2] && y[0] < x[2] && x[1] < y[3] && y[1] < x[3] {
				t.Errorf("nodes %s %v and %s %v overlap", p, x, q, y)
			}
		}
	}
	for _, id := range []string{"b", "c", "d"} {
		n := got[id]
		if n.Font == 0 {
			t.Errorf("node %s shows no diagnostic", id)
			continue
		}
		w, bw := n.Drawn[2]-n.Drawn[0], n.Bare[2]-n.Bare[0]
		h, bh := n.Drawn[3]-n.Drawn[1], n.Bare[3]-n.Bare[1]
		if w > bw+0.5 {
			t.Errorf("node %s is %.1f px wide with its diagnostic, %.1f px without", id, w, bw)
		}
		if h > bh+2*n.Font {
			t.Errorf("node %s is %.1f px tall with its diagnostic, %.1f px without: more than one line (%.1f px font)", id, h, bh, n.Font)
		}
	}

	// The whole text: the node's tooltip, and the inspector.
	var full []string
	for _, d := range made.Report.Diagnostics {
		if d.Node == "b" {
			full = append(full, d.Message)
		}
	}
	if len(full) == 0 {
		t.Fatalf("no diagnostic on b: %+v", made.Report.Diagnostics)
	}
	diag := fmt.Sprintf(node, "b") + " .gnode-diag"
	for _, m := range full {
		b.do("reading b's diagnostic in its tooltip", poll(fmt.Sprintf(`(document.querySelector(%q)?.title || "").includes(%q)`, diag, m)))
	}
	b.do("seeing b's diagnostic cut", poll(fmt.Sprintf(`document.querySelector(%q).scrollWidth > document.querySelector(%q).clientWidth`, diag, diag)))
	b.selectNode("b")
	for _, m := range full {
		b.do("seeing b's diagnostics in the inspector", poll(fmt.Sprintf(`[...document.querySelectorAll(".inspector .placed .diag")].some(e => e.textContent.includes(%q))`, m)))
	}
}

// setText sets a textarea's text the way React sees typing (an input
// event).
func setText(sel, text string) chromedp.Action[chromedp.Void] {
	return eval(fmt.Sprintf(`(() => { const a = document.querySelector(%q); Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set.call(a, %q); a.dispatchEvent(new Event("input", {bubbles: true})); return true })()`, sel, text))
}

// TestStudioErrorWordsInBrowser: what the page says when something fails
// says what is wrong, where and how to fix it, never an internal string
// (a Go error chain, the browser's "Failed to fetch" or its JSON parser's
// phrasing): a name that is taken, JSON text with a syntax error (its
// line and column), a document that is not an object, or whose nodes,
// edges, channels, guards or ids are of another kind than the page reads
// (the page keeps working), and the studio gone away.
func TestStudioErrorWordsInBrowser(t *testing.T) {
	b := newBrowser(t)
	ts, _ := browserStudio(t, nil)
	s := &testStudio{t: t, ts: ts}
	var made studio.DocumentView
	s.must("", "POST", "/api/documents", map[string]any{"name": "taken", "source": chain}, 201).json(t, &made)
	str := b.str
	status := `document.querySelector("#status").textContent`
	b.do("creating a document of a name that is taken",
		chromedp.Navigate(ts.URL+"/"),
		poll(`document.querySelectorAll('[aria-label="Document"] option').length === 2`),
		typeInto(chromedp.CSS("#new-name"), "taken"),
		chromedp.Click(chromedp.CSS("#new-doc")),
		poll(status+` !== ""`),
	)
	if got := str(status); !strings.Contains(got, `The document name is taken: another document is named "taken"; choose another name`) {
		t.Errorf("the status line says %q", got)
	} else {
		noInternalWords(t, "the status line", got)
	}

	b.do("opening the JSON tab",
		choose(`[aria-label="Document"]`, made.ID),
		chromedp.WaitVisible(chromedp.CSS(".react-flow__node")),
		chromedp.Click(chromedp.CSS("#tab-json")),
		chromedp.WaitVisible(chromedp.CSS("#json")),
	)
	jsonErr := `(document.querySelector("#json-error")?.textContent || "")`
	for _, c := range []struct{ name, text, want string }{
		{"a syntax error", "{\n  \"name\": \"taken\",\n  \"nodes\": [}\n}", `The JSON text is not valid at line 3, column 13: expected a value (a string, number, object, array, true, false or null), found "}"; fix it and apply again.`},
		{"a missing comma", "{\n  \"name\": \"taken\"\n  \"nodes\": []\n}", `The JSON text is not valid at line 3, column 3: expected ',' or '}' after a member's value, found "\""; fix it and apply again.`},
		{"the text cut short", "{\n  \"name\": \"taken\",\n  \"nodes\": [", `The JSON text is not valid at line 3, column 13: expected a value (a string, number, object, array, true, false or null), found the end of the text; fix it and apply again.`},
		{"an array", `[1, 2]`, `The document must be a JSON object, {"name": …, "channels": {…}, "nodes": […], "edges": […]}, not an array; fix it and apply again.`},
		{"nodes that are not an array", `{"name": "taken", "nodes": 5}`, `"nodes" must be an array, e.g. "nodes": [{"id": "a", "type": "say"}], not a number; fix it and apply again.`},
		{"an edge that is not an object", `{"name": "taken", "nodes": [], "edges": ["a"]}`, `edges[0] must be an object such as {"from": "__start__", "to": "a"}, not a string; fix it and apply again.`},
		{"channels that are not an object", `{"name": "taken", "channels": ["log"], "nodes": [], "edges": []}`, `"channels" must be an object, e.g. "channels": {"log": {"reducer": "append"}}, not an array; fix it and apply again.`},
		{"a channel that is null", `{"name": "taken", "channels": {"log": null}}`, `channels.log must be an object such as {"reducer": "append"}, not null; fix it and apply again.`},
		{"a guard that is not an object", `{"name": "taken", "edges": [{"from": "__start__", "to": "__end__", "when": "yes"}]}`, `edges[0].when must be an object such as {"channel": "n", "eq": "yes"}, not a string; fix it and apply again.`},
		{"a node id that is not a string", `{"name": "taken", "nodes": [{"id": {"a": 1}, "type": "say"}]}`, `nodes[0].id must be a string such as "a", not an object; fix it and apply again.`},
	} {
		b.do("applying "+c.name,
			setText("#json", c.text),
			chromedp.Click(chromedp.CSS("#json-apply")),
			poll(jsonErr+` !== ""`),
		)
		got := str(jsonErr)
		if !strings.Contains(got, c.want) {
			t.Errorf("applying %s: the page says %q\nwant %q", c.name, got, c.want)
		}
		noInternalWords(t, "the JSON tab's error", got)
		if strings.Contains(got, "position") || strings.Contains(got, "SyntaxError") {
			t.Errorf("applying %s: the page says %q, in the parser's words", c.name, got)
		}
		// The page still works: the canvas is one click away.
		b.do("going on after "+c.name,
			chromedp.Click(chromedp.CSS("#tab-canvas")),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(node, "a"))),
			chromedp.Click(chromedp.CSS("#tab-json")),
			chromedp.WaitVisible(chromedp.CSS("#json")),
		)
	}

	// The studio goes away: saving says it cannot be reached, and that
	// the edits are kept.
	ts.Close()
	b.do("saving with the studio gone",
		chromedp.Click(chromedp.CSS("#save")),
		poll(status+`.startsWith("The studio cannot be reached")`),
	)
	got := str(status)
	noInternalWords(t, "the status line", got)
	if strings.Contains(got, "Failed to fetch") || !strings.Contains(got, "try again") {
		t.Errorf("with the studio gone the status line says %q", got)
	}
}
