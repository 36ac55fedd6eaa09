package spec_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/spec"
)

// This file checks the adversarial corpus in ../testdata/hostile (every
// document is either accepted and round-trips value-equal, or refused with
// the diagnostics listed here; none panics or takes unbounded time), the
// limits of spec.Limits at their exact boundaries, and that decoding costs
// memory in proportion to the document.

// hostileDir is the corpus, shared with the generator's tests.
const hostileDir = "../testdata/hostile"

// hostileCase is the spec-level expectation for one corpus document.
type hostileCase struct {
	// accept says the document is accepted; otherwise it is refused.
	accept bool
	// diags are substrings that must each appear in a diagnostic: warnings
	// of an accepted document (which must then have no other warnings), or
	// errors of a refused one.
	diags []string
	// gen makes the document when it is too big to commit; the file then
	// does not exist.
	gen func() []byte
}

// hostileCases holds one entry per document of the corpus, keyed by file
// name. testdata/hostile/README.md describes each in a table.
var hostileCases = map[string]hostileCase{
	// Names that a generator must not turn into code as they are.
	"keyword-node-id.json":                 {accept: true},
	"goto-odd-targets.json":                {accept: true},
	"predeclared-names.json":               {accept: true},
	"generated-names.json":                 {accept: true},
	"collide-after-conversion.json":        {accept: true},
	"case-only-collision.json":             {accept: true},
	"unicode-ids.json":                     {accept: true},
	"digits-first-id.json":                 {accept: true},
	"punctuation-only-id.json":             {accept: true},
	"empty-after-conversion.json":          {accept: true},
	"whitespace-ids.json":                  {accept: true},
	"path-traversal-names.json":            {accept: true},
	"comment-close-in-config.json":         {accept: true},
	"backtick-in-name.json":                {accept: true},
	"quotes-and-escapes.json":              {accept: true},
	"go-code-in-strings.json":              {accept: true},
	"template-and-expression-strings.json": {accept: true},
	"html-script-in-name.json":             {accept: true},
	"newline-in-id.json":                   {accept: true},
	"u2028-in-string.json":                 {accept: true},
	"nul-in-string.json":                   {accept: true},
	"huge-number-1e400.json":               {accept: true},
	"config-number-beyond-float64.json": {diags: []string{
		`1e400 does not fit float64`,
		`-1e400 does not fit float64`,
		`1e999999999 does not fit float64`,
		`1e309 does not fit float64`,
		`-1.8e308 does not fit float64`,
	}},
	"deep-config-at-limit.json": {accept: true},
	"unknown-members-with-code.json": {diags: []string{
		`unknown member "eval" in the document`,
		`unknown member "script" in the document`,
		`unknown member "on_write" in channel "x"`,
		`unknown member "code" in node "a"`,
		`unknown member "template" in node "a"`,
		`unknown member "hook" in edge "__start__" -> "a"`,
	}},
	"extension-members-with-code.json": {accept: true},
	"10000-nodes.json":                 {accept: true, gen: tenThousandNodes},
	"long-names.json":                  {accept: true, gen: longNames},

	// Documents that must be refused, and why.
	"deep-config-nesting.json": {diags: []string{"nesting deeper than 64 levels"}},
	"duplicate-keys.json": {diags: []string{
		`duplicate key "name" (first at 2:3)`,
		`duplicate key "id" (first at 5:6)`,
		`duplicate key "k" (first at 5:52)`,
		`duplicate key "edges" (first at 7:3)`,
	}},
	"duplicate-keys-escaped.json": {diags: []string{`duplicate key "id" (first at 3:6)`, `duplicate key "k" (first at 3:57)`}},
	"case-insensitive-keys.json": {diags: []string{
		"node id is missing or empty",
		"node has no type",
		`edge has no "from"`,
		"graph has no entry edge",
	}},
	"expression-in-when.json": {diags: []string{
		`predicate has unknown operator "expr"`,
		`edge "when" must be an object, not a string`,
		"eq literal must be a JSON scalar (string, number, boolean or null), not an object",
	}},
	"raw-newline-in-string.json":  {diags: []string{"control character U+000A in a string"}},
	"raw-nul-in-string.json":      {diags: []string{"control character U+0000 in a string"}},
	"bom-prefix.json":             {diags: []string{"the document starts with a byte order mark"}},
	"invalid-utf8-in-id.json":     {diags: []string{"invalid UTF-8 byte 0xff in a string"}},
	"lone-surrogate-in-type.json": {diags: []string{`lone surrogate \ud800 in a string`}},
	"empty-ids.json": {diags: []string{
		"channel name is empty",
		"node id is missing or empty",
		"node has no type",
		`edge has no "to"`,
	}},
	"reserved-ids.json":          {diags: []string{`node id "__start__" is reserved`, `node id "__end__" is reserved`}},
	"trailing-data.json":         {diags: []string{"trailing data after the document"}},
	"comments-in-json.json":      {diags: []string{`invalid character '/', expecting a member name in double quotes`}},
	"single-quoted-strings.json": {diags: []string{`invalid character '\'', expecting a member name in double quotes`}},
	"nan-and-infinity.json":      {diags: []string{`invalid character 'N', expecting a value`}},
}

// tenThousandNodes is a chain of 10,000 nodes: __start__ -> n00000 -> ...
// -> n09999 -> __end__, each with a small config.
func tenThousandNodes() []byte {
	const n = 10000
	var b bytes.Buffer
	b.WriteString(`{"name": "ten-thousand", "channels": {"n": {"reducer": "append"}}, "nodes": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"id": "n%05d", "type": "t%d", "config": {"i": %d}}`, i, i%7, i)
	}
	b.WriteString(`], "edges": [{"from": "__start__", "to": "n00000"}`)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, ",\n"+`{"from": "n%05d", "to": "n%05d"}`, i-1, i)
	}
	fmt.Fprintf(&b, `, {"from": "n%05d", "to": "__end__", "when": {"channel": "n", "truthy": true}}]}`, n-1)
	return b.Bytes()
}

// longNames has a 64 KiB graph name, node id, type, channel name, config
// key and predicate literal.
func longNames() []byte {
	long := func(c string) string { return strings.Repeat(c, 64<<10) }
	id := long("i")
	return fmt.Appendf(nil, `{"name": %q, "channels": {%q: {}}, "nodes": [{"id": %q, "type": %q, "config": {%q: %q}}],
"edges": [{"from": "__start__", "to": %q}, {"from": %q, "to": "__end__", "when": {"channel": %q, "eq": %q}}]}`,
		long("n"), long("c"), id, long("t"), long("k"), long("v"), id, id, long("c"), long("e"))
}

// decodeSafely decodes doc, turning a panic into a test failure, and fails
// when decoding takes longer than limit.
func decodeSafely(t *testing.T, name string, doc []byte, limit time.Duration, opts ...spec.Option) (g *spec.Graph, ds spec.Diagnostics) {
	t.Helper()
	start := time.Now()
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Fatalf("Decode(%s) panicked: %v\n%s", name, v, debug.Stack())
			}
		}()
		g, ds = spec.Decode(name, doc, opts...)
	}()
	if el := time.Since(start); el > limit {
		t.Errorf("Decode(%s) took %v on %d bytes, over %v", name, el, len(doc), limit)
	}
	return g, ds
}

func TestHostileCorpus(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(hostileDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[string]bool{}
	for _, p := range paths {
		onDisk[filepath.Base(p)] = true
	}
	for name := range onDisk {
		if _, ok := hostileCases[name]; !ok {
			t.Errorf("%s/%s has no entry in hostileCases: add its expected outcome", hostileDir, name)
		}
	}
	for _, name := range sortedCaseNames() {
		c := hostileCases[name]
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			var doc []byte
			switch {
			case c.gen != nil && onDisk[name]:
				t.Fatalf("%s is generated by the test and must not be committed", name)
			case c.gen != nil:
				doc = c.gen()
			case !onDisk[name]:
				t.Fatalf("%s/%s is missing: every entry of hostileCases needs its document", hostileDir, name)
			default:
				if doc, err = os.ReadFile(filepath.Join(hostileDir, name)); err != nil {
					t.Fatal(err)
				}
			}
			g, ds := decodeSafely(t, name, doc, 5*time.Second)
			for _, d := range ds {
				if d.Message == "" || d.Hint == "" || d.Pos.File != name || d.Pos.Line < 1 || d.Pos.Col < 1 {
					t.Errorf("diagnostic without a message, a hint or a position: %#v", d)
				}
			}
			if !c.accept {
				if g != nil {
					t.Fatalf("accepted; want it refused with %q", c.diags)
				}
				if len(c.diags) == 0 {
					t.Fatal("a refused document needs the diagnostics it is refused with")
				}
				wantDiags(t, ds.Errors(), c.diags)
				return
			}
			if g == nil {
				t.Fatalf("refused:\n%v", ds.Err())
			}
			// Many documents here guard every edge of a node without
			// covering every value; that warning is TestCoverageWarning's.
			warnings := slices.DeleteFunc(slices.Clone(ds), func(d spec.Diagnostic) bool {
				return d.Severity != spec.SeverityWarning || strings.Contains(d.Message, "every outgoing edge is guarded")
			})
			if len(warnings) != len(c.diags) {
				t.Errorf("%d warnings, want %d:\n%s", len(warnings), len(c.diags), diagText(warnings))
			}
			wantDiags(t, warnings, c.diags)
			checkValueRoundTrip(t, name, doc, g)
		})
	}
}

func sortedCaseNames() []string {
	names := make([]string, 0, len(hostileCases))
	for name := range hostileCases {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func wantDiags(t *testing.T, ds spec.Diagnostics, want []string) {
	t.Helper()
	for _, w := range want {
		if !slices.ContainsFunc(ds, func(d spec.Diagnostic) bool { return strings.Contains(d.Message, w) }) {
			t.Errorf("no diagnostic contains %q; got:\n%s", w, diagText(ds))
		}
	}
}

func diagText(ds spec.Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("\t" + d.String() + "\n")
	}
	return b.String()
}

// checkValueRoundTrip checks an accepted document: its canonical encoding is
// JSON-value-equal to it, decodes to an equal graph and is a fixed point,
// and every string and config of the graph is exactly what encoding/json,
// an independent decoder, reads from the document.
func checkValueRoundTrip(t *testing.T, name string, doc []byte, g *spec.Graph) {
	t.Helper()
	enc := g.Encode()
	if eq, err := spec.JSONEqual(doc, enc); err != nil || !eq {
		t.Fatalf("the encoding is not value-equal to the document (%v):\n%.2000s", err, enc)
	}
	g2, ds := spec.Decode(name, enc)
	if g2 == nil {
		t.Fatalf("the encoding is refused:\n%v", ds.Err())
	}
	if !spec.Equal(g, g2) || !bytes.Equal(g2.Encode(), enc) {
		t.Fatal("decode(encode(g)) differs from g, or the encoding is not a fixed point")
	}

	var ref struct {
		Name     *string                    `json:"name"`
		Channels map[string]json.RawMessage `json:"channels"`
		Nodes    []struct {
			ID     string          `json:"id"`
			Type   string          `json:"type"`
			Config json.RawMessage `json:"config"`
		} `json:"nodes"`
		Edges []struct {
			From string          `json:"from"`
			To   string          `json:"to"`
			When json.RawMessage `json:"when"`
		} `json:"edges"`
	}
	if err := json.Unmarshal(doc, &ref); err != nil {
		t.Fatalf("encoding/json refuses an accepted document: %v", err)
	}
	if ref.Name != nil && *ref.Name != g.Name {
		t.Errorf("name %q, encoding/json reads %q", g.Name, *ref.Name)
	}
	if len(g.Channels) != len(ref.Channels) {
		t.Errorf("%d channels, encoding/json reads %d", len(g.Channels), len(ref.Channels))
	}
	for _, c := range g.Channels {
		if _, ok := ref.Channels[c.Name]; !ok {
			t.Errorf("channel %q is not in the document as encoding/json reads it", c.Name)
		}
	}
	if len(g.Nodes) != len(ref.Nodes) || len(g.Edges) != len(ref.Edges) {
		t.Fatalf("%d nodes and %d edges, encoding/json reads %d and %d", len(g.Nodes), len(g.Edges), len(ref.Nodes), len(ref.Edges))
	}
	for i, n := range g.Nodes {
		r := ref.Nodes[i]
		if n.ID != r.ID || n.Type != r.Type {
			t.Errorf("nodes[%d] is %q of type %q, encoding/json reads %q of type %q", i, n.ID, n.Type, r.ID, r.Type)
		}
		if (n.Config == nil) != (r.Config == nil) {
			t.Errorf("nodes[%d].config presence differs", i)
		} else if n.Config != nil {
			if eq, err := spec.JSONEqual(n.Config, r.Config); err != nil || !eq {
				t.Errorf("nodes[%d].config %s, encoding/json reads %s (%v)", i, n.Config, r.Config, err)
			}
		}
	}
	for i, e := range g.Edges {
		if r := ref.Edges[i]; e.From != r.From || e.To != r.To || (e.When == nil) != (r.When == nil) {
			t.Errorf("edges[%d] is %q -> %q, encoding/json reads %q -> %q", i, e.From, e.To, r.From, r.To)
		}
	}
}

// TestHostileCorpusREADME keeps the corpus table of testdata/hostile/README.md
// in step with hostileCases: one row per document, and the outcome it states.
func TestHostileCorpusREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(hostileDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // file -> spec-level outcome cell
	for line := range strings.Lines(string(readme)) {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		file := strings.Trim(strings.TrimSpace(cells[1]), "`")
		rows[file] = strings.TrimSpace(cells[3])
	}
	for name, c := range hostileCases {
		outcome, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("README.md has no row for %s", name)
		case c.accept && !strings.HasPrefix(outcome, "accepted"):
			t.Errorf("README.md says %s is %q; it is accepted", name, outcome)
		case !c.accept && !strings.HasPrefix(outcome, "refused"):
			t.Errorf("README.md says %s is %q; it is refused", name, outcome)
		}
	}
	for name := range rows {
		if _, ok := hostileCases[name]; !ok {
			t.Errorf("README.md has a row for %s, which hostileCases does not know", name)
		}
	}
}

// TestDefaultLimits pins the documented defaults (SECURITY.md lists them).
func TestDefaultLimits(t *testing.T) {
	want := spec.Limits{MaxBytes: 8 << 20, MaxDepth: 64, MaxNodes: 100000, MaxEdges: 400000, MaxChannels: 100000}
	if spec.DefaultLimits != want {
		t.Errorf("DefaultLimits = %+v, want %+v (update SECURITY.md with them)", spec.DefaultLimits, want)
	}
}

// limitDoc returns a valid document that reaches n of the limit under test
// (n bytes, nesting depth n, n nodes or n edges).
type limitDoc func(n int) []byte

// sizedDoc is a valid document of exactly n bytes (n >= 64), padded with
// spaces.
func sizedDoc(n int) []byte {
	doc := []byte(`{"nodes": [{"id": "a", "type": "t"}], "edges": [{"from": "__start__", "to": "a"}]}`)
	return append(doc, bytes.Repeat([]byte(" "), n-len(doc))...)
}

// deepDoc is a valid document whose deepest value is at depth n (n >= 4):
// the document is depth 1, nodes 2, the node 3, its config 4, and the rest
// is arrays inside the config.
func deepDoc(n int) []byte {
	inner := strings.Repeat("[", n-4) + strings.Repeat("]", n-4)
	if n == 4 {
		inner = "0"
	}
	return []byte(`{"nodes": [{"id": "a", "type": "t", "config": {"k": ` + inner + `}}], "edges": [{"from": "__start__", "to": "a"}]}`)
}

// nodesDoc is a valid document with n nodes, all reached from __start__.
// channelsDoc is a valid document declaring n channels.
func channelsDoc(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"channels": {`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"c%x":{}`, i)
	}
	b.WriteString(`}, "edges": [{"from": "__start__", "to": "__end__"}]}`)
	return b.Bytes()
}

func nodesDoc(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"nodes": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"%x","type":"t"}`, i)
	}
	b.WriteString(`], "edges": [{"from": "__start__", "to": "__end__"}`)
	for i := range n {
		fmt.Fprintf(&b, `,{"from":"__start__","to":"%x"}`, i)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// edgesDoc is a valid document with n edges between two nodes: one entry
// edge and n-1 guarded edges that differ by their literal.
func edgesDoc(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"channels":{"c":{}},"nodes":[{"id":"a","type":"t"}],"edges":[{"from":"__start__","to":"a"}`)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, `,{"from":"a","to":"a","when":{"channel":"c","eq":%d}}`, i)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// TestLimitsAtTheBoundary checks each limit, at its default and at values
// set with WithLimits: a document exactly at the limit is accepted, one unit
// over is refused with one diagnostic that names the size, the limit and
// the option that raises it, and nothing panics. The default node and edge
// limits are checked only with ILMEK_LONG_TESTS=1 set.
func TestLimitsAtTheBoundary(t *testing.T) {
	tests := []struct {
		name    string
		doc     limitDoc
		set     func(l *spec.Limits, n int)
		def     int
		msg     string // fmt pattern of the refusal, given n+1 and n
		hint    string
		extra   spec.Limits // limits needed besides the one under test
		path    string
		minimum int
	}{
		{name: "MaxBytes", doc: sizedDoc, set: func(l *spec.Limits, n int) { l.MaxBytes = n }, def: spec.DefaultLimits.MaxBytes,
			msg: "the document is over the limit of %[2]d bytes", hint: "raise Limits.MaxBytes with spec.WithLimits", minimum: 100},
		{name: "MaxDepth", doc: deepDoc, set: func(l *spec.Limits, n int) { l.MaxDepth = n }, def: spec.DefaultLimits.MaxDepth,
			msg: "nesting deeper than %[2]d levels", hint: "raise Limits.MaxDepth with spec.WithLimits", minimum: 4},
		{name: "MaxNodes", doc: nodesDoc, set: func(l *spec.Limits, n int) { l.MaxNodes = n }, def: spec.DefaultLimits.MaxNodes,
			msg: "graph has %d nodes, over the limit of %d", hint: "raise Limits.MaxNodes with spec.WithLimits", path: "nodes", minimum: 1},
		{name: "MaxChannels", doc: channelsDoc, set: func(l *spec.Limits, n int) { l.MaxChannels = n }, def: spec.DefaultLimits.MaxChannels,
			msg: "graph has %d channels, over the limit of %d", hint: "raise Limits.MaxChannels with spec.WithLimits", path: "channels", minimum: 1},
		// 400,000 edges take more than the default 8 MiB: the default edge
		// limit is reached only with a larger MaxBytes.
		{name: "MaxEdges", doc: edgesDoc, set: func(l *spec.Limits, n int) { l.MaxEdges = n }, def: spec.DefaultLimits.MaxEdges,
			msg: "graph has %d edges, over the limit of %d", hint: "raise Limits.MaxEdges with spec.WithLimits", path: "edges",
			extra: spec.Limits{MaxBytes: 64 << 20}, minimum: 1},
	}
	for _, tc := range tests {
		for _, n := range []int{tc.minimum, 200, tc.def} {
			// A document at the default node or edge limit takes seconds
			// to decode (tens of seconds with -race); the custom limits
			// above check the same code, TestDefaultLimits the values.
			if n == tc.def && n > 1000 && os.Getenv("ILMEK_LONG_TESTS") == "" {
				continue
			}
			t.Run(fmt.Sprintf("%s=%d", tc.name, n), func(t *testing.T) {
				lim := tc.extra
				var opts []spec.Option
				if n != tc.def || lim != (spec.Limits{}) {
					tc.set(&lim, n)
					opts = append(opts, spec.WithLimits(lim))
				}
				at := tc.doc(n)
				if g, ds := decodeSafely(t, "at.json", at, time.Minute, opts...); g == nil {
					t.Fatalf("refused at the limit:\n%s", diagText(ds))
				}
				over := tc.doc(n + 1)
				g, ds := decodeSafely(t, "over.json", over, time.Minute, opts...)
				if g != nil || len(ds) != 1 {
					t.Fatalf("one over the limit: accepted=%v with %d diagnostics, want refused with one:\n%.3000s", g != nil, len(ds), diagText(ds))
				}
				d := ds[0]
				if want := fmt.Sprintf(tc.msg, n+1, n); d.Message != want || d.Severity != spec.SeverityError || !strings.Contains(d.Hint, tc.hint) {
					t.Errorf("got %q (hint %q), want %q with a hint to %s", d.Message, d.Hint, want, tc.hint)
				}
				if d.Pos.Line < 1 || tc.path != "" && d.Path != tc.path {
					t.Errorf("diagnostic at %v, path %q; want a position and path %q", d.Pos, d.Path, tc.path)
				}
			})
		}
	}
}

// TestZeroLimitsMeanDefaults: a zero or negative field of Limits keeps the
// default, so WithLimits(Limits{MaxNodes: 5}) changes only MaxNodes.
func TestZeroLimitsMeanDefaults(t *testing.T) {
	for _, lim := range []spec.Limits{{}, {MaxBytes: -1, MaxDepth: -1, MaxNodes: -1, MaxEdges: -1}, {MaxNodes: 5}} {
		_, ds := spec.Decode("d.json", deepDoc(spec.DefaultLimits.MaxDepth+1), spec.WithLimits(lim))
		wantDiags(t, ds, []string{"nesting deeper than 64 levels"})
		if g, ds := spec.Decode("d.json", deepDoc(spec.DefaultLimits.MaxDepth), spec.WithLimits(lim)); g == nil {
			t.Errorf("WithLimits(%+v) refuses depth 64:\n%s", lim, diagText(ds))
		}
	}
	_, ds := spec.Decode("n.json", nodesDoc(6), spec.WithLimits(spec.Limits{MaxNodes: 5}))
	wantDiags(t, ds, []string{"graph has 6 nodes, over the limit of 5"})
}

// TestDecodeCostIsLinear: decoding allocates memory in proportion to the
// document, whatever its shape. A long name above many members must not be
// copied once per member (into JSON paths, position maps and diagnostics).
func TestDecodeCostIsLinear(t *testing.T) {
	long := strings.Repeat("x", 32<<10)
	members := func(open, close string, member func(i int) string) []byte {
		var b strings.Builder
		b.WriteString(open)
		for i := range 1000 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(member(i))
		}
		b.WriteString(close)
		return []byte(b.String())
	}
	tests := []struct {
		name string
		doc  []byte
	}{
		{"unknown members of a channel with a long name", members(`{"channels": {"`+long+`": {`, `}}, "edges": [{"from": "__start__", "to": "__end__"}]}`,
			func(i int) string { return fmt.Sprintf(`"m%d": 0`, i) })},
		{"duplicate keys under a long config key", members(`{"nodes": [{"id": "a", "type": "t", "config": {"`+long+`": {`, `}}}], "edges": [{"from": "__start__", "to": "a"}]}`,
			func(int) string { return `"k": 0` })},
		{"the same members under a short name (reference)", members(`{"channels": {"x": {`, `}}, "edges": [{"from": "__start__", "to": "__end__"}]}`,
			func(i int) string { return fmt.Sprintf(`"m%d": 0`, i) })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, ds := decodeSafely(t, "cost.json", tc.doc, 10*time.Second)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			text := 0
			for _, d := range ds {
				text += len(d.String())
			}
			t.Logf("%d bytes: %d KB allocated, %d diagnostics, %d KB text", len(tc.doc), alloc>>10, len(ds), text>>10)
			const factor = 500
			if alloc > uint64(factor*len(tc.doc)) || text > 50*len(tc.doc) {
				t.Errorf("a %d-byte document allocated %d MB while decoding (limit %d× its size) and got %d diagnostics totalling %d KB of text (limit 50× its size): "+
					"every member repeats the long key in its JSON path", len(tc.doc), alloc>>20, factor, len(ds), text>>10)
			}
		})
	}
}
