package gen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/spec"
)

// This file runs the adversarial corpus of ../testdata/hostile through the
// generator: every document is either generated correctly (the package
// passes checkGenerated: it type-checks, declares exactly what the
// document calls for, keeps every document string in literals, embeds a
// document equal to the source) or refused with placed, printable
// diagnostics; a document the decoder refuses is refused by ilmekgen with
// the decoder's diagnostics. Nothing panics. TestHostileREADME keeps the
// generator column of testdata/hostile/README.md in step with
// hostileGenCases.

// hostileGen is the generator-level outcome of one corpus document.
type hostileGen struct {
	// specRefused: the decoder refuses the document (see
	// spec/hostile_corpus_test.go); ilmekgen prints its diagnostics.
	specRefused bool
	// generated: the package is generated and passes checkGenerated.
	generated bool
	// run: the generated package is also built in a temporary module, its
	// graph built with FromRegistry, and runtime.ToSpec of it must be
	// value-equal to the document (TestHostileBuildAndRun).
	run bool
	// errors is the number of generation errors of a document the
	// generator refuses, and examples are messages each of which must be
	// part of one of them.
	errors   int
	examples []string
	// numbers: refused for config numbers out of their type's range,
	// which no renaming fixes.
	numbers bool
	// gen makes a document too big to commit (the same function as in
	// spec/hostile_corpus_test.go).
	gen func() []byte
	// big marks a document whose checks take seconds: it is checked
	// without the canary comparison (its names are neutral already) and
	// not at all under the race detector, where generating it alone takes
	// half a minute; TestHostileCLI still generates it through ilmekgen.
	big bool
}

// hostileGenCases holds one entry per document of testdata/hostile.
var hostileGenCases = map[string]hostileGen{
	// Generated: the names convert to distinct Go identifiers.
	"keyword-node-id.json":             {generated: true, run: true},
	"goto-odd-targets.json":            {generated: true, run: true},
	"predeclared-names.json":           {generated: true, run: true},
	"deep-config-at-limit.json":        {generated: true, run: true},
	"extension-members-with-code.json": {generated: true, run: true},
	"long-names.json":                  {generated: true, run: true, gen: hostileLongNames},
	"10000-nodes.json":                 {generated: true, gen: hostileTenThousandNodes, big: true},

	// Refused by the generator: an integer beyond int64, the type a
	// config's integers are inferred as (guard literals of any size stay:
	// they compare as doubles). A config number beyond float64 is the
	// decoder's refusal (config-number-beyond-float64.json).
	"huge-number-1e400.json": {errors: 4, numbers: true, examples: []string{
		`9223372036854775808 does not fit int64: encoding/json wants an integer in its range`,
	}},

	// Refused by the generator: a name with no Go name, or two names with
	// one; every clash names both places.
	"generated-names.json": {errors: 3, examples: []string{
		`node "Config" converts to NodeConfig, as does node type "Node" (its config type)`,
		`node id "_" has no letter or digit, so it has no Go name`,
	}},
	"collide-after-conversion.json": {errors: 17, examples: []string{
		`channel "user_id" converts to UserID, as does channel "UserID"`,
		`node "aB" converts to NodeAB, as does node "a_b"`,
		`node type "httpCall" converts to HTTPCall, as does node type "http_call"`,
		`config key "userId" converts to field UserID of HTTPCallConfig, as does config key "UserID"`,
	}},
	"case-only-collision.json": {errors: 5, examples: []string{
		`channel "intent" converts to Intent, as does channel "Intent"`,
		`node "Agent" converts to NodeAgent, as does node "agent"`,
		`node type "LLM" converts to LLM, as does node type "llm"`,
	}},
	"unicode-ids.json": {errors: 8, examples: []string{
		`channel name "数" converts to 数, which does not start with an upper-case letter`,
		`node type "٣٣" converts to ٣٣, which starts with a digit`,
		`node type "\u202e" has no letter or digit`,
	}},
	"digits-first-id.json": {errors: 9, examples: []string{
		`channel name "2nd" converts to 2nd, which starts with a digit`,
		`node type "2fa" converts to 2fa, which starts with a digit`,
	}},
	"punctuation-only-id.json": {errors: 38, examples: []string{
		`node id "..." has no letter or digit`,
		`node type ":=" has no letter or digit`,
		`node id "\\" has no letter or digit`,
	}},
	"empty-after-conversion.json": {errors: 20, examples: []string{
		`channel name "_" has no letter or digit`,
		`node id "\u00a0" has no letter or digit`,
	}},
	"whitespace-ids.json": {errors: 12, examples: []string{
		`node " a" converts to NodeA, as does node "a"`,
		`node type "t\u200b" converts to T, as does node type "t"`,
	}},
	"path-traversal-names.json": {errors: 1, examples: []string{
		`node type "~" has no letter or digit`,
	}},
	"comment-close-in-config.json": {errors: 5, examples: []string{
		`channel "c*/" converts to C, as does channel "//c"`,
		`config key "*/" has no letter or digit`,
	}},
	"backtick-in-name.json": {errors: 5, examples: []string{
		"node id \"``\" has no letter or digit",
	}},
	"quotes-and-escapes.json": {errors: 9, examples: []string{
		`node "a\\b" converts to NodeAB, as does node "a\"b"`,
		`channel name "\"" has no letter or digit`,
	}},
	"go-code-in-strings.json": {errors: 2, examples: []string{
		`config key "}" has no letter or digit`,
		`config key "\"+os.Getenv(\"X\")+\"" cannot be a json struct tag`,
	}},
	"template-and-expression-strings.json": {errors: 1, examples: []string{
		`channel name "{{.}}" has no letter or digit`,
	}},
	"html-script-in-name.json": {errors: 2, examples: []string{
		`node id "<!--" has no letter or digit`,
		`node id "]]>" has no letter or digit`,
	}},
	"newline-in-id.json": {errors: 6, examples: []string{
		`channel name "\r" has no letter or digit`,
		`config key "multi\nline" cannot be a json struct tag`,
		`node type "t\n\n" converts to T, as does node type "t\r"`,
	}},
	"u2028-in-string.json": {errors: 5, examples: []string{
		`channel name "\u2028" has no letter or digit`,
		`node type "\ufeff" has no letter or digit`,
	}},
	"nul-in-string.json": {errors: 4, examples: []string{
		`channel name "\x00" has no letter or digit`,
		`node type "\x00\x00" has no letter or digit`,
	}},

	// Refused by the decoder.
	"unknown-members-with-code.json":    {specRefused: true},
	"deep-config-nesting.json":          {specRefused: true},
	"config-number-beyond-float64.json": {specRefused: true},
	"duplicate-keys.json":               {specRefused: true},
	"duplicate-keys-escaped.json":       {specRefused: true},
	"case-insensitive-keys.json":        {specRefused: true},
	"expression-in-when.json":           {specRefused: true},
	"raw-newline-in-string.json":        {specRefused: true},
	"raw-nul-in-string.json":            {specRefused: true},
	"bom-prefix.json":                   {specRefused: true},
	"invalid-utf8-in-id.json":           {specRefused: true},
	"lone-surrogate-in-type.json":       {specRefused: true},
	"empty-ids.json":                    {specRefused: true},
	"reserved-ids.json":                 {specRefused: true},
	"trailing-data.json":                {specRefused: true},
	"comments-in-json.json":             {specRefused: true},
	"single-quoted-strings.json":        {specRefused: true},
	"nan-and-infinity.json":             {specRefused: true},
}

// hostileTenThousandNodes is spec/hostile_corpus_test.go's tenThousandNodes:
// a chain of 10,000 nodes, each with a small config.
func hostileTenThousandNodes() []byte {
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

// hostileLongNames is spec/hostile_corpus_test.go's longNames: a 64 KiB
// graph name, node id, type, channel name, config key and literal.
func hostileLongNames() []byte {
	long := func(c string) string { return strings.Repeat(c, 64<<10) }
	id := long("i")
	return fmt.Appendf(nil, `{"name": %q, "channels": {%q: {}}, "nodes": [{"id": %q, "type": %q, "config": {%q: %q}}],
"edges": [{"from": "__start__", "to": %q}, {"from": %q, "to": "__end__", "when": {"channel": %q, "eq": %q}}]}`,
		long("n"), long("c"), id, long("t"), long("k"), long("v"), id, id, long("c"), long("e"))
}

// hostileDoc is one corpus document with its expected outcome.
type hostileDoc struct {
	name string
	data []byte
	want hostileGen
}

// hostileDocs reads the corpus: every file of testdata/hostile and the
// generated documents, in name order. Files and entries must match.
func hostileDocs(t *testing.T) []hostileDoc {
	t.Helper()
	dir := filepath.Join(moduleRoot(t), "testdata", "hostile")
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no documents in %s (%v)", dir, err)
	}
	onDisk := map[string]bool{}
	for _, p := range paths {
		onDisk[filepath.Base(p)] = true
		if _, ok := hostileGenCases[filepath.Base(p)]; !ok {
			t.Errorf("testdata/hostile/%s has no entry in hostileGenCases (gen/hostile_test.go): add its generator outcome", filepath.Base(p))
		}
	}
	var docs []hostileDoc
	for _, name := range sortedKeys(hostileGenCases) {
		want := hostileGenCases[name]
		var data []byte
		switch {
		case want.gen != nil:
			data = want.gen()
		case !onDisk[name]:
			t.Errorf("hostileGenCases has %s, which is not in testdata/hostile", name)
			continue
		default:
			if data, err = os.ReadFile(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		docs = append(docs, hostileDoc{name: name, data: data, want: want})
	}
	return docs
}

// generateSafely generates g, turning a panic into a test failure.
func generateSafely(t *testing.T, g *spec.Graph, opts Options) (files []File, ds spec.Diagnostics) {
	t.Helper()
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Fatalf("Generate panicked: %v\n%s", v, debug.Stack())
			}
		}()
		files, ds = Generate(g, opts)
	}()
	return files, ds
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// hostileOptions are the options the corpus is generated with.
func hostileOptions(name string) Options {
	return Options{Package: "hostilegraph", PkgPath: "example.com/tmp/hostilegraph", Source: name}
}

// TestHostileGenerate generates every corpus document and checks its
// outcome against hostileGenCases.
func TestHostileGenerate(t *testing.T) {
	for _, doc := range hostileDocs(t) {
		t.Run(strings.TrimSuffix(doc.name, ".json"), func(t *testing.T) {
			g, ds := spec.Decode(doc.name, doc.data)
			if doc.want.specRefused {
				if g != nil || !ds.HasErrors() {
					t.Fatal("the decoder accepts the document; hostileGenCases says it refuses it")
				}
				return
			}
			if ds.HasErrors() {
				t.Fatalf("the decoder refuses the document: %v", ds.Errors())
			}
			if doc.want.big && raceEnabled() {
				t.Skip("too slow under the race detector; checked without -race and through ilmekgen by TestHostileCLI")
			}
			opts := hostileOptions(doc.name)
			start := time.Now()
			files, ds := generateSafely(t, g, opts)
			// A guard against a hang, not a speed claim (the benchmarks make
			// those): generous enough for a loaded machine under -race.
			if el := time.Since(start); el > 2*time.Minute {
				t.Errorf("Generate took %v", el)
			}
			errs := ds.Errors()
			if !doc.want.generated {
				if len(files) != 0 {
					t.Fatal("Generate returned files with errors")
				}
				if len(errs) != doc.want.errors {
					t.Errorf("%d errors, want %d:\n%v", len(errs), doc.want.errors, errs)
				}
				checkDiagnostics(t, errs)
				for _, d := range errs {
					if d.Pos.File != doc.name || d.Path == "" || d.Hint == "" {
						t.Errorf("diagnostic without file, path or hint: %#v", d)
					}
				}
				for _, ex := range doc.want.examples {
					found := false
					for _, d := range errs {
						found = found || strings.Contains(d.Message, ex)
					}
					if !found {
						t.Errorf("no error says %s; the errors are:\n%v", ex, errs)
					}
				}
				if doc.want.numbers {
					return
				}
				// The rest of the document must generate: rename what was
				// refused, keep every other string, and check the package.
				fixed := renameRefused(t, g, opts)
				files, ds := generateSafely(t, fixed, opts)
				if ds.HasErrors() {
					t.Fatalf("with the refused names renamed, still refused:\n%v", ds.Errors())
				}
				checkGenerated(t, fixed, opts, files, checkOptions{})
				return
			}
			if len(ds) > 0 {
				t.Fatalf("diagnostics; hostileGenCases says it generates cleanly:\n%v", ds)
			}
			checkGenerated(t, g, opts, files, checkOptions{noCanary: doc.want.big})
			embedded := embeddedSpec(t, files)
			if eq, err := spec.JSONEqual(doc.data, embedded); err != nil || !eq {
				t.Errorf("the embedded document is not value-equal to the file (%v)", err)
			}
		})
	}
}

// renameRefused returns a copy of g in which every name the generator
// refuses (by the paths of its errors) is renamed to a plain one: a
// channel (and the predicates that read it), a node id (and its edges), a
// node type, a config key (in every node of the type). Every other string
// — configs, literals, the graph name, unknown members — is kept, so the
// rest of a hostile document is generated and checked too. It renames
// until the generator accepts the copy (at most three rounds).
func renameRefused(t *testing.T, g *spec.Graph, opts Options) *spec.Graph {
	t.Helper()
	c := g.Clone()
	n := 0
	fresh := func(what string) string {
		n++
		return fmt.Sprintf("renamed_%s_%d", what, n)
	}
	for range 3 {
		_, ds := Generate(c, opts)
		if !ds.HasErrors() {
			return c
		}
		refused := map[string]bool{}
		for _, d := range ds.Errors() {
			refused[d.Path] = true
		}
		chans := map[string]string{}
		for i, ch := range c.Channels {
			if refused[spec.PathKey("channels", ch.Name)] {
				chans[ch.Name] = fresh("channel")
				c.Channels[i].Name = chans[ch.Name]
			}
		}
		sort.Slice(c.Channels, func(i, j int) bool { return c.Channels[i].Name < c.Channels[j].Name })
		ids, typs, keys := map[string]string{}, map[string]string{}, map[string]map[string]string{}
		for i, nd := range c.Nodes {
			node := spec.PathIndex("nodes", i)
			if refused[spec.PathKey(node, "id")] {
				ids[nd.ID] = fresh("node")
			}
			if refused[spec.PathKey(node, "type")] && typs[nd.Type] == "" {
				typs[nd.Type] = fresh("type")
			}
			if v, err := decodeJSON(nd.Config); len(nd.Config) > 0 && err == nil {
				obj, _ := v.(map[string]any)
				for k := range obj {
					if refused[spec.PathKey(spec.PathKey(node, "config"), k)] {
						if keys[nd.Type] == nil {
							keys[nd.Type] = map[string]string{}
						}
						if keys[nd.Type][k] == "" {
							keys[nd.Type][k] = fresh("key")
						}
					}
				}
			}
		}
		for i, nd := range c.Nodes {
			if r, ok := ids[nd.ID]; ok {
				c.Nodes[i].ID = r
			}
			if ren := keys[nd.Type]; len(ren) > 0 && len(nd.Config) > 0 {
				v, err := decodeJSON(nd.Config)
				if obj, ok := v.(map[string]any); ok && err == nil {
					out := map[string]any{}
					for k, e := range obj {
						if r, ok := ren[k]; ok {
							k = r
						}
						out[k] = e
					}
					data, err := json.Marshal(out)
					if err != nil {
						t.Fatal(err)
					}
					c.Nodes[i].Config = data
				}
			}
			if r, ok := typs[nd.Type]; ok {
				c.Nodes[i].Type = r
			}
		}
		for i, e := range c.Edges {
			if r, ok := ids[e.From]; ok {
				c.Edges[i].From = r
			}
			if r, ok := ids[e.To]; ok {
				c.Edges[i].To = r
			}
			if e.When != nil {
				if r, ok := chans[e.When.Channel]; ok {
					c.Edges[i].When.Channel = r
				}
			}
		}
	}
	_, ds := Generate(c, opts)
	if ds.HasErrors() {
		t.Fatalf("renaming the refused names does not make the document generate:\n%v", ds.Errors())
	}
	return c
}

// embeddedSpec returns the value of the constant specJSON of generated
// files.
func embeddedSpec(t *testing.T, files []File) []byte {
	t.Helper()
	gp, err := parseAndCheck(typeEnvFor(t), Options{Package: "x"}, files, generatorImports)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := constValue(gp, "specJSON")
	if !ok {
		t.Fatal("no constant specJSON")
	}
	return []byte(s)
}

// TestHostileBuildAndRun builds the generated packages of the documents
// marked run in one temporary module, with go vet, and runs a program
// that builds each graph with FromRegistry and prints runtime.ToSpec of
// it, which must be value-equal to the document.
func TestHostileBuildAndRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs generated packages")
	}
	dir := tempModule(t)
	var imports, calls strings.Builder
	docs := map[string][]byte{}
	i := 0
	for _, doc := range hostileDocs(t) {
		if !doc.want.run {
			continue
		}
		g, ds := spec.Decode(doc.name, doc.data)
		if ds.HasErrors() {
			t.Fatalf("%s: %v", doc.name, ds.Errors())
		}
		pkg := fmt.Sprintf("h%d", i)
		i++
		files, ds := Generate(g, Options{Package: pkg, PkgPath: "example.com/tmp/" + pkg, Source: doc.name})
		if ds.HasErrors() {
			t.Fatalf("%s: %v", doc.name, ds.Errors())
		}
		writeFiles(t, filepath.Join(dir, pkg), files)
		docPath := filepath.Join(dir, "docs", doc.name)
		if err := os.MkdirAll(filepath.Dir(docPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(docPath, doc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		docs[doc.name] = doc.data
		fmt.Fprintf(&imports, "\t%q\n", "example.com/tmp/"+pkg)
		fmt.Fprintf(&calls, "\treport(%q, func(reg runtime.Registry) (*spec.Graph, error) {\n\t\tg, err := %s.New(%s.FromRegistry(reg))\n\t\tif err != nil {\n\t\t\treturn nil, err\n\t\t}\n\t\treturn runtime.ToSpec(g)\n\t})\n", doc.name, pkg, pkg)
	}
	main := `package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
` + imports.String() + `)

// report builds one graph with a registry that has a no-op node for every
// type of its document and prints its name and runtime.ToSpec as JSON.
func report(name string, build func(runtime.Registry) (*spec.Graph, error)) {
	data, err := os.ReadFile(filepath.Join("docs", name))
	if err != nil {
		panic(err)
	}
	doc, diags := spec.Decode(name, data)
	if err := diags.Err(); err != nil {
		panic(err)
	}
	reg := runtime.Registry{}
	for _, n := range doc.Nodes {
		reg[n.Type] = func(spec.Node) (runtime.NodeFunc, error) {
			return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }, nil
		}
	}
	out := map[string]any{"name": name}
	if g, err := build(reg); err != nil {
		out["error"] = err.Error()
	} else {
		out["spec"] = string(g.Encode())
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
}

func main() {
` + calls.String() + `}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"vet", "./..."}, {"run", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		if args[0] != "run" {
			continue
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			var r struct{ Name, Spec, Error string }
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("program output %q: %v", line, err)
			}
			seen[r.Name] = true
			if r.Error != "" {
				t.Errorf("%s: building the generated graph: %s", r.Name, r.Error)
				continue
			}
			if eq, err := spec.JSONEqual(docs[r.Name], []byte(r.Spec)); err != nil || !eq {
				t.Errorf("%s: runtime.ToSpec of the generated graph is not value-equal to the document (%v):\n%s", r.Name, err, r.Spec)
			}
		}
		for name := range docs {
			if !seen[name] {
				t.Errorf("%s: the program printed nothing", name)
			}
		}
	}
}

// ilmekgen runs this test binary as ilmekgen in dir (see TestMain, in
// package gen_test) and returns its stderr and exit status.
func ilmekgen(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	// The race detector's pause at exit (atexit_sleep_ms) would add a
	// second to every run.
	cmd.Env = append(os.Environ(), "ILMEKGEN_RUN_MAIN=1", "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return stderr.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("ilmekgen %s: %v", strings.Join(args, " "), err)
	}
	return stderr.String(), 0
}

// TestHostileCLI runs ilmekgen check on the whole corpus and checks that
// it prints, for every document, exactly the diagnostics of the decoder
// and, for a document the decoder accepts, of the generator.
func TestHostileCLI(t *testing.T) {
	root := moduleRoot(t)
	tmp := t.TempDir()
	var args []string
	want := map[string][]string{} // path as printed -> diagnostic lines
	for _, doc := range hostileDocs(t) {
		path := "testdata/hostile/" + doc.name
		if doc.want.gen != nil {
			path = filepath.ToSlash(filepath.Join(tmp, doc.name))
			if err := os.WriteFile(path, doc.data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		args = append(args, path)
		g, ds := spec.Decode(path, doc.data)
		lines := diagLines(ds)
		// A generated document has no generation diagnostics
		// (TestHostileGenerate); the others are generated here.
		if g != nil && !ds.HasErrors() && !doc.want.generated {
			_, gds := Generate(g, Options{Package: "hostile", PkgPath: modulePath, Source: path})
			lines = append(lines, diagLines(gds)...)
		}
		want[path] = lines
	}
	stderr, code := ilmekgen(t, root, append([]string{"check", "-p", "hostile"}, args...)...)
	if code != 1 {
		t.Fatalf("ilmekgen check: exit status %d, want 1\n%s", code, stderr)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		path, _, ok := strings.Cut(line, ".json:")
		if !ok {
			t.Errorf("ilmekgen check printed a line that names no document: %q", line)
			continue
		}
		got[path+".json"] = append(got[path+".json"], line)
	}
	for path, lines := range want {
		sort.Strings(lines)
		g := got[path]
		sort.Strings(g)
		if strings.Join(lines, "\n") != strings.Join(g, "\n") {
			t.Errorf("%s: ilmekgen check printed\n%s\nwant\n%s", path, strings.Join(g, "\n"), strings.Join(lines, "\n"))
		}
	}
}

// diagLines formats diagnostics as ilmekgen prints them.
func diagLines(ds spec.Diagnostics) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.String())
	}
	return out
}

// hostileREADMECell is the generator column of a document's row.
func hostileREADMECell(c hostileGen) string {
	switch {
	case c.specRefused:
		return "refused by the decoder; `ilmekgen` prints its diagnostics"
	case c.generated && c.run:
		return "generated: type-checks, keeps every string in literals, embeds an equal spec; builds, and `ToSpec` round-trips value-equal"
	case c.generated:
		return "generated: type-checks, keeps every string in literals, embeds an equal spec"
	}
	noun := "errors"
	if c.errors == 1 {
		noun = "error"
	}
	ex := make([]string, len(c.examples))
	for i, e := range c.examples {
		ex[i] = codeSpan(e)
	}
	if c.numbers {
		return fmt.Sprintf("refused, %d %s, one per config integer beyond int64 (the type an unbound config's integers are inferred as): %s; guard literals of any size are accepted", c.errors, noun, strings.Join(ex, "; "))
	}
	return fmt.Sprintf("refused, %d %s: %s. With those names renamed, the rest generates and passes every check", c.errors, noun, strings.Join(ex, "; "))
}

// codeSpan writes s as a Markdown code span, fenced with more backticks
// than any run in s.
func codeSpan(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// TestHostileREADME checks that the generator column of
// testdata/hostile/README.md says what hostileGenCases does, for every
// document; -update rewrites the column.
func TestHostileREADME(t *testing.T) {
	path := filepath.Join(moduleRoot(t), "testdata", "hostile", "README.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rows := map[string]bool{}
	changed := false
	for line := range strings.Lines(string(readme)) {
		cells := strings.Split(strings.TrimRight(line, "\n"), "|")
		if len(cells) != 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			out.WriteString(line)
			continue
		}
		file := strings.Trim(strings.TrimSpace(cells[1]), "`")
		rows[file] = true
		c, ok := hostileGenCases[file]
		if !ok {
			t.Errorf("README.md has a row for %s, which hostileGenCases does not know", file)
			out.WriteString(line)
			continue
		}
		want := hostileREADMECell(c)
		if strings.Contains(want, "|") {
			t.Errorf("%s: the generator column would hold a |, which splits the table: %s", file, want)
		}
		if got := strings.TrimSpace(cells[4]); got != want {
			if !*update {
				t.Errorf("README.md says the generator's outcome for %s is\n\t%s\nhostileGenCases says\n\t%s\nrun go test ./gen -run TestHostileREADME -update", file, got, want)
			}
			cells[4] = " " + want + " "
			changed = true
		}
		out.WriteString(strings.Join(cells, "|") + "\n")
	}
	for name := range hostileGenCases {
		if !rows[name] {
			t.Errorf("README.md has no row for %s", name)
		}
	}
	if *update && changed {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHostileTextHelpers checks the helpers that keep document text from
// ending a comment, reaching a terminal raw or becoming a format verb, and
// the checker's verb count.
func TestHostileTextHelpers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain // text */ with `ticks`", "plain // text */ with `ticks`"},
		{"a\nb\rc", `a\nb\rc`},
		{"tab\there", `tab\u0009here`},
		{"nul\x00 del\x7f", `nul\u0000 del\u007f`},
		{"sep\u2028\u2029\u0085", `sep\u2028\u2029\u0085`},
		{"bidi\u202eevil\u2066", `bidi\u202eevil\u2066`},
		{"nbsp\u00a0zwsp\u200bbom\ufeff", `nbsp\u00a0zwsp\u200bbom\ufeff`},
		{"tag\U000E0041", `tag\U000e0041`},
		{"é 数 😀 \ufffd", "é 数 😀 \ufffd"},
	} {
		if got := sanitizeLine(tc.in); got != tc.want {
			t.Errorf("sanitizeLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"llm", "llm"},
		{"example.com/x.T", "example.com/x.T"},
		{"", `""`},
		{"a b", `"a b"`},
		{"t\u2028\n// x", `"t\u2028\n// x"`},
		{`say "hi"`, `"say \"hi\""`},
		{"rtl\u202e", `"rtl\u202e"`},
	} {
		if got := flagName(tc.in); got != tc.want {
			t.Errorf("flagName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		format string
		verbs  int
	}{
		{"plain", 0},
		{"100%% sure", 0},
		{"%q: %w", 2},
		{"%-8.3f|%+d|%#v|%%|%T", 4},
		{"graph " + formatText("100% %d %s"), 0},
		{"trailing %", 1},
	} {
		if got := countVerbs(tc.format); got != tc.verbs {
			t.Errorf("countVerbs(%q) = %d, want %d", tc.format, got, tc.verbs)
		}
	}
}
