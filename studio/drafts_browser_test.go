package studio_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ilmek-go/ilmek/studio"
)

// TestStudioUnreadableDrafts opens stored drafts whose members the canvas
// cannot draw (nodes, edges or channels of another kind, a node that is
// not an object, a document that is not an object, text that is not
// JSON). The page keeps working: it shows one line per problem naming
// the member, keeps the stored text as it was in the JSON tab, writes
// nothing over the stored draft, and draws the document once it is fixed
// there; a broken draft opened as a subgraph node's child leaves the
// parent as it was.
func TestStudioUnreadableDrafts(t *testing.T) {
	b := newBrowser(t)
	ts, _ := browserStudio(t, nil)
	s := &testStudio{t: t, ts: ts}
	cases := []struct {
		name, src, want string
	}{
		{"nodes that are an object", `{"name": "d", "channels": {}, "nodes": {"a": {"id": "a", "type": "say"}}, "edges": []}`,
			"nodes: is an object, not a list"},
		{"nodes that are a string", `{"name": "d", "channels": {}, "nodes": "a", "edges": []}`,
			"nodes: is a string, not a list"},
		{"nodes that are null", `{"name": "d", "channels": {}, "nodes": null, "edges": []}`,
			"nodes: is null, not a list"},
		{"edges that are an object", `{"name": "d", "channels": {}, "nodes": [], "edges": {"from": "__start__", "to": "__end__"}}`,
			"edges: is an object, not a list"},
		{"channels that are a list", `{"name": "d", "channels": ["log"], "nodes": [], "edges": []}`,
			"channels: is a list, not an object"},
		{"a channel that is null", `{"name": "d", "channels": {"log": null}, "nodes": [], "edges": []}`,
			"channels.log: is null, not an object"},
		{"a node that is a number", `{"name": "d", "channels": {}, "nodes": [5], "edges": []}`,
			"nodes[0]: is a number, not an object"},
		{"a guard that is a string", `{"name": "d", "channels": {}, "nodes": [], "edges": [{"from": "__start__", "to": "__end__", "when": "yes"}]}`,
			"edges[0].when: is a string, not an object"},
		{"a document that is a list", `[{"name": "d"}]`,
			"the document: is a list, not an object"},
		{"text that is not JSON", "{\"name\": \"d\",\n \"nodes\": [}",
			"The JSON text is not valid at line 2, column 12"},
	}
	views := make([]studio.DocumentView, len(cases))
	for i, c := range cases {
		s.must("", "POST", "/api/documents", map[string]any{"name": fmt.Sprintf("bad%d", i), "source": c.src}, 201).json(t, &views[i])
		if views[i].Source != c.src || views[i].Report.Errors == 0 {
			t.Fatalf("%s: stored %q with %d errors, want it kept as written, with errors", c.name, views[i].Source, views[i].Report.Errors)
		}
	}
	str := b.str
	b.do("opening the studio",
		chromedp.Navigate(ts.URL+"/"),
		poll(fmt.Sprintf(`document.querySelectorAll('[aria-label="Document"] option').length === %d`, len(cases)+1)),
	)
	problems := `[...document.querySelectorAll(".unreadable .placed li")].map(e => e.textContent).join("\n")`
	for i, c := range cases {
		b.do("opening "+c.name,
			eval(`document.querySelector("#tab-canvas")?.click(); true`),
			choose(`[aria-label="Document"]`, views[i].ID),
			poll(fmt.Sprintf(`document.querySelector("header .meta")?.textContent.startsWith("rev 1") && %s.includes(%q)`, problems, c.want)),
		)
		if got := str(problems); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: the page says %q, want its first line to start %q", c.name, got, c.want)
		}
		noInternalWords(t, "the problems of "+c.name, str(problems))
		if got := str(`document.querySelector("#status").textContent`); !strings.Contains(got, c.want) {
			t.Errorf("%s: the status line says %q, want it to hold %q", c.name, got, c.want)
		}
		// The page works: its panels are there, the canvas draws nothing
		// it cannot, and the JSON tab holds the stored text unchanged.
		b.do("reading "+c.name+" in the JSON tab",
			poll(`!!document.querySelector(".diagnostics .badge.error") && !document.querySelector(".react-flow__node") && document.querySelector("#save").disabled`),
			chromedp.Click(chromedp.CSS("#tab-json")),
			chromedp.WaitVisible(chromedp.CSS("#json")),
		)
		if got := str(`document.querySelector("#json").value`); got != c.src {
			t.Errorf("%s: the JSON tab holds %q, want the stored text %q", c.name, got, c.src)
		}
	}

	// Nothing was written over the stored drafts.
	for i, c := range cases {
		var v studio.DocumentView
		s.must("", "GET", "/api/documents/"+views[i].ID, nil, 200).json(t, &v)
		if v.Revision != 1 || v.Source != c.src {
			t.Errorf("%s: after opening it the draft is revision %d %q, want revision 1 %q", c.name, v.Revision, v.Source, c.src)
		}
	}

	// Fixed in the JSON tab, the document is drawn and saved; the broken
	// revision stays in the history.
	last := views[len(views)-1]
	fixed := strings.Replace(chain, `"name":"chain"`, `"name":"`+last.Name+`"`, 1)
	b.do("fixing the last document in the JSON tab",
		setText("#json", fixed),
		chromedp.Click(chromedp.CSS("#json-apply")),
		chromedp.Click(chromedp.CSS("#tab-canvas")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(node, "b"))),
		poll(`!document.querySelector(".unreadable") && !document.querySelector("#save").disabled`),
		chromedp.Click(chromedp.CSS("#save")),
		poll(`document.querySelector("#status").textContent.startsWith("Saved revision 2")`),
	)
	var r1 struct{ Source string }
	s.must("", "GET", "/api/documents/"+last.ID+"/revisions/1", nil, 200).json(t, &r1)
	var v2 studio.DocumentView
	s.must("", "GET", "/api/documents/"+last.ID, nil, 200).json(t, &v2)
	if r1.Source != cases[len(cases)-1].src || v2.Revision != 2 || v2.Report.Errors != 0 {
		t.Errorf("after the fix: revision 1 %q, the draft revision %d with %d errors", r1.Source, v2.Revision, v2.Report.Errors)
	}

	// A broken child opened from a subgraph node: the parent comes back
	// as it was.
	par := s.create("", "holder", `{"name":"holder","channels":{},"nodes":[{"id":"sub","type":"subgraph","config":{"graph":"bad0"}}],
 "edges":[{"from":"__start__","to":"sub"},{"from":"sub","to":"__end__"}]}`)
	sub := fmt.Sprintf(node, "sub")
	b.do("opening the broken child of a subgraph node",
		chromedp.Navigate(ts.URL+"/"),
		poll(fmt.Sprintf(`document.querySelectorAll('[aria-label="Document"] option').length === %d`, len(cases)+2)),
		choose(`[aria-label="Document"]`, par.ID),
		chromedp.WaitVisible(chromedp.CSS(sub+" .gnode-open")),
		poll(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e?.click(); return !!document.querySelector(".crumbs") })()`, sub+" .gnode-open")),
		poll(fmt.Sprintf(`document.querySelector('.crumbs [aria-current="page"]')?.textContent === "bad0 (draft)" && %s.includes(%q)`, problems, cases[0].want)),
		chromedp.Click(chromedp.CSS(`.crumbs button[data-crumb="0"]`)),
		chromedp.WaitVisible(chromedp.CSS(sub)),
		poll(`!document.querySelector(".crumbs") && !document.querySelector(".unreadable")`),
	)
	var v0 studio.DocumentView
	s.must("", "GET", "/api/documents/"+views[0].ID, nil, 200).json(t, &v0)
	if v0.Revision != 1 || v0.Source != cases[0].src {
		t.Errorf("the child's draft is revision %d %q after opening it, want revision 1 %q", v0.Revision, v0.Source, cases[0].src)
	}
}

// TestStudioLongNodeIDs: a node id of 200 characters without a space
// keeps to its node's box, cut with an ellipsis (the full id in the
// tooltip), and wraps in the panels that show it: nothing is wider than
// its box (each element's scrollWidth is at most its clientWidth) on the
// canvas, in the inspector (the node, the graph's edge list and selects,
// the edge), in the diagnostics and in the publish review.
func TestStudioLongNodeIDs(t *testing.T) {
	b := newBrowser(t)
	ts, _ := browserStudio(t, nil)
	s := &testStudio{t: t, ts: ts}
	long := strings.Repeat("a", 100) + strings.Repeat("Z", 100)
	src := `{"name":"long","channels":{"log":{"reducer":"append"}},
 "nodes":[{"id":"` + long + `","type":"say","config":{"text":"hello"}},{"id":"b","type":"say","config":{"text":"bye"}}],
 "edges":[{"from":"__start__","to":"` + long + `"},{"from":"` + long + `","to":"b"},{"from":"b","to":"__end__"}]}`
	made := s.create("", "long", src)
	if made.Report.Errors != 0 {
		t.Fatalf("the document has errors: %+v", made.Report.Diagnostics)
	}
	s.must("", "POST", "/api/documents/"+made.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)

	// overflows lists the elements sel finds that are wider than their box.
	overflows := func(step, sel string) {
		t.Helper()
		raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`JSON.stringify([...document.querySelectorAll(%q)].map(e => [e.className || e.tagName, e.scrollWidth, e.clientWidth]))`, sel)))
		if err != nil {
			b.fail(step, err)
		}
		var got [][]any
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			t.Errorf("%s: nothing matches %s", step, sel)
		}
		for _, e := range got {
			if e[1].(float64) > e[2].(float64) {
				t.Errorf("%s: %v is %v px wide inside a box of %v px", step, e[0], e[1], e[2])
			}
		}
	}
	n := fmt.Sprintf(node, long)
	b.do("opening the document",
		chromedp.Navigate(ts.URL+"/"),
		poll(`document.querySelectorAll('[aria-label="Document"] option').length === 2`),
		choose(`[aria-label="Document"]`, made.ID),
		chromedp.WaitVisible(chromedp.CSS(n)),
		chromedp.Click(chromedp.CSS(".react-flow__controls-fitview")), settled(),
	)
	overflows("the node", n+", "+n+" .gnode, "+n+" .gnode-type")
	overflows("the page", "html, body, .studio, main, .center, .palette, .inspector, .diagnostics")
	// The id is cut in its box, with an ellipsis, and whole in the tooltip.
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(() => {
		const id = document.querySelector(%q), g = id.closest(".gnode"), w = id.closest(".react-flow__node");
		return JSON.stringify({title: id.title, ellipsis: getComputedStyle(id).textOverflow, cut: id.scrollWidth > id.clientWidth,
			id: id.getBoundingClientRect().width, node: g.getBoundingClientRect().width, wrapper: w.getBoundingClientRect().width});
	})()`, n+" .gnode-id")))
	if err != nil {
		b.fail("measuring the id", err)
	}
	var id struct {
		Title, Ellipsis   string
		Cut               bool
		ID, Node, Wrapper float64
	}
	if err := json.Unmarshal([]byte(raw), &id); err != nil {
		t.Fatal(err)
	}
	if id.Title != long || id.Ellipsis != "ellipsis" || !id.Cut || id.ID > id.Node || id.Node > id.Wrapper+0.5 {
		t.Errorf("the id in its node: %+v, want it cut with an ellipsis inside the node, its title the whole id", id)
	}

	b.selectNode(long)
	overflows("the node's inspector", ".inspector, .inspector h2, .inspector code")
	// A click on the pane's empty top left corner (its middle is a node).
	corner, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector(".react-flow__pane").getBoundingClientRect(); return [r.left + 20, r.top + 20] })()`))
	if err != nil || len(corner) != 2 {
		b.fail("finding the pane's corner", err)
	}
	b.do("showing the graph's inspector",
		chromedp.MouseClickXY(corner[0], corner[1]),
		chromedp.WaitVisible(chromedp.CSS(".edge-list")),
	)
	overflows("the graph's inspector", ".inspector, .inspector select, .edge-list button")
	b.do("showing an edge's inspector",
		chromedp.Click(chromedp.CSS(`.edge-list button[data-edge="1"]`)),
		poll(`document.querySelector(".inspector h2")?.textContent.startsWith("Edge")`),
	)
	overflows("the edge's inspector", ".inspector, .inspector h2, .inspector code")

	// A change of the long node: its diagnostic, and the publish review.
	b.selectNode(long)
	b.do("breaking the long node's config",
		chromedp.WaitVisible(chromedp.CSS("#cfg-times")),
		typeInto(chromedp.CSS("#cfg-times"), "two\r"),
		poll(`[...document.querySelectorAll(".diagnostics .diag.error")].some(e => e.textContent.includes("ZZZZ"))`),
	)
	overflows("the diagnostics", ".diagnostics, .diagnostics button, .diagnostics code, .inspector, .inspector .placed li")
	b.do("changing the long node's config",
		clear("#cfg-times"),
		typeInto(chromedp.CSS("#cfg-times"), "2\r"),
		poll(`!!document.querySelector(".diagnostics .badge.ok")`),
		chromedp.Click(chromedp.CSS("#publish")),
		chromedp.WaitVisible(chromedp.CSS("#publish-confirm")),
		poll(`[...document.querySelectorAll(".changes td code")].some(e => e.textContent.includes("ZZZZ"))`),
	)
	overflows("the publish review", ".modal-body, .changes, .changes code")
}
