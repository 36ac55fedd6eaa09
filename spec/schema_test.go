package spec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/tools/txtar"

	"github.com/ilmek-go/ilmek/spec"
)

// This file keeps schema.json in step with the decoder: every document of
// the repository's testdata gets the same verdict (error-free, or refused)
// from spec.Decode and from a JSON Schema validator running the schema,
// except the few documents listed in schemaExceptions, which break a rule
// the schema says it cannot express.

// Why a document may be refused by Decode but accepted by the schema. Each
// is a rule the schema's description names.
const (
	whyChannel  = "a predicate's channel must be declared: a JSON Schema cannot refer to the keys of \"channels\""
	whyEndpoint = "edge endpoints must name declared nodes: a JSON Schema cannot refer to the ids of \"nodes\""
	whyGoto     = "goto targets must name declared nodes: a JSON Schema cannot refer to the ids of \"nodes\""
	whyUnique   = "node ids must be unique: uniqueItems compares whole nodes, not their ids"
	whyDupKey   = "a repeated key: the validator's JSON reader (encoding/json) keeps the last one"
	whyEncoding = "not UTF-8 or a lone surrogate: the validator's JSON reader (encoding/json) replaces it with U+FFFD"
	whyLimit    = "over a limit of spec.Limits (nesting depth): a JSON Schema has no depth bound"
	whyNumber   = "a config number beyond float64: the schema leaves a config's values free"
)

// schemaExceptions are the documents on which the schema and the decoder
// disagree, each with the rule it breaks. Every other document must get the
// same verdict from both, and every document listed here must still get
// different verdicts (a stale entry fails the test).
var schemaExceptions = map[string]string{
	"spec/testdata/invalid/predicate-undeclared-channel.json":              whyChannel,
	"conformance/testdata/cases/invalid-predicate-undeclared-channel.json": whyChannel,
	"testdata/errors/invalid-spec.txtar":                                   whyChannel,
	"spec/testdata/invalid/edge-from-unknown.json":                         whyEndpoint,
	"spec/testdata/invalid/edge-to-unknown.json":                           whyEndpoint,
	"spec/testdata/invalid/goto-unknown.json":                              whyGoto,
	"conformance/testdata/cases/invalid-edge-to-unknown-node.json":         whyEndpoint,
	"spec/testdata/invalid/duplicate-node-id.json":                         whyUnique,
	"conformance/testdata/cases/invalid-duplicate-node-id.json":            whyUnique,
	"spec/testdata/invalid/duplicate-key.json":                             whyDupKey,
	"spec/testdata/invalid/duplicate-key-in-config.json":                   whyDupKey,
	"testdata/hostile/duplicate-keys.json":                                 whyDupKey,
	"testdata/hostile/duplicate-keys-escaped.json":                         whyDupKey,
	"spec/testdata/invalid/invalid-utf8.json":                              whyEncoding,
	"spec/testdata/invalid/lone-surrogate.json":                            whyEncoding,
	"testdata/hostile/invalid-utf8-in-id.json":                             whyEncoding,
	"testdata/hostile/lone-surrogate-in-type.json":                         whyEncoding,
	"spec/testdata/invalid/depth-limit.json":                               whyLimit,
	"testdata/hostile/deep-config-nesting.json":                            whyLimit,
	"testdata/hostile/config-number-beyond-float64.json":                   whyNumber,
	"spec/testdata/fuzz/FuzzDecode/big-exponent":                           whyNumber,
}

// schemaDoc is one document of the corpus, named by its path from the
// module root (and, for documents inside a file, a suffix).
type schemaDoc struct {
	name string
	data []byte
}

// compiledSchema compiles spec.Schema once, checking it against the draft
// 2020-12 meta-schema.
var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(spec.Schema()))
	if err != nil {
		return nil, fmt.Errorf("schema.json is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("schema.json")
})

// schemaVerdict validates data with the schema: nil when the document is
// JSON and valid under it.
func schemaVerdict(t *testing.T, data []byte) error {
	t.Helper()
	sch, err := compiledSchema()
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return sch.Validate(v)
}

func TestSchemaIsDraft2020(t *testing.T) {
	if _, err := compiledSchema(); err != nil {
		t.Fatalf("spec.Schema() does not compile as a draft 2020-12 schema: %v", err)
	}
	var top struct {
		Schema      string `json:"$schema"`
		Description string `json:"description"`
	}
	if err := json.Unmarshal(spec.Schema(), &top); err != nil {
		t.Fatal(err)
	}
	if top.Schema != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema is %q, want the draft 2020-12 meta-schema", top.Schema)
	}
	// Every rule the agreement test skips documents for must be named in
	// the description, where editors and builders read it.
	for _, rule := range []string{
		`a predicate's channel must be declared`,
		`edge endpoints must name declared nodes`,
		`node ids must be unique`,
		`no object may repeat a key`,
		`the text must be UTF-8 without lone surrogate escapes`,
		`the limits of spec.Limits`,
		`<node>#<n>`,
	} {
		if !strings.Contains(top.Description, rule) {
			t.Errorf("the schema's description does not say it cannot check %q", rule)
		}
	}
	a, b := spec.Schema(), spec.Schema()
	a[0] = 'x'
	if b[0] == 'x' {
		t.Error("spec.Schema returns shared bytes")
	}
}

// TestSchemaAgreesWithDecoder is the agreement test: for every document of
// the corpus, the schema accepts it exactly when Decode reports no error.
func TestSchemaAgreesWithDecoder(t *testing.T) {
	docs := schemaCorpus(t)
	seen := map[string]bool{}
	for _, d := range docs {
		seen[d.name] = true
		t.Run(d.name, func(t *testing.T) {
			_, diags := spec.Decode(d.name, d.data)
			decodeOK := !diags.HasErrors()
			schemaErr := schemaVerdict(t, d.data)
			why, excepted := schemaExceptions[d.name]
			agree := decodeOK == (schemaErr == nil)
			switch {
			case excepted && agree:
				t.Errorf("listed in schemaExceptions (%s), but the schema and the decoder now agree: remove the entry", why)
			case excepted:
				if decodeOK {
					t.Errorf("listed in schemaExceptions (%s), but it is the schema that refuses it: %v", why, schemaErr)
				}
				t.Skipf("the schema cannot check this: %s", why)
			case decodeOK && schemaErr != nil:
				t.Errorf("Decode accepts the document but the schema refuses it:\n%v", schemaErr)
			case !decodeOK && schemaErr == nil:
				t.Errorf("Decode refuses the document but the schema accepts it; make the schema refuse it, or, when no JSON Schema can express the rule, list the document in schemaExceptions and name the rule in the schema's description. Decode says:\n%s", diags)
			}
		})
	}
	for name, why := range schemaExceptions {
		if why != "" && !seen[name] {
			t.Errorf("schemaExceptions lists %s, which is not in the corpus: remove the entry", name)
		}
	}
	// The corpus must cover both verdicts richly, or the test proves
	// little.
	var ok, refused int
	for _, d := range docs {
		if _, diags := spec.Decode(d.name, d.data); diags.HasErrors() {
			refused++
		} else {
			ok++
		}
	}
	t.Logf("%d documents: %d accepted, %d refused, %d listed as exceptions", len(docs), ok, refused, len(schemaExceptions))
	if ok < 50 || refused < 100 {
		t.Errorf("corpus has %d accepted and %d refused documents; the testdata was not found", ok, refused)
	}
}

// schemaCorpus reads every spec document of the repository's testdata: the
// spec package's valid, invalid and fuzz seed documents, the hostile
// corpus, the generator's golden and error cases, the examples, the
// conformance cases (their "spec" member) and the predicate truth table
// (the probe with each row's "when").
func schemaCorpus(t *testing.T) []schemaDoc {
	t.Helper()
	const root = ".."
	var docs []schemaDoc
	seen := map[string]string{} // content → name of the first document with it
	add := func(name string, data []byte) {
		if _, dup := seen[string(data)]; dup {
			return // a copy (the fuzz seeds repeat the valid and invalid documents)
		}
		seen[string(data)] = name
		docs = append(docs, schemaDoc{name: name, data: data})
	}
	glob := func(pattern string) []string {
		files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no file matches %s", pattern)
		}
		slices.Sort(files)
		return files
	}
	read := func(file string) (string, []byte) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, file)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.ToSlash(rel), data
	}
	for _, pattern := range []string{
		"spec/testdata/valid/*.json",
		"spec/testdata/invalid/*.json",
		"testdata/hostile/*.json",
		"testdata/golden/*/spec.json",
		"examples/*/*.json",
	} {
		for _, f := range glob(pattern) {
			add(read(f))
		}
	}
	for _, f := range glob("spec/testdata/fuzz/FuzzDecode/*") {
		name, data := read(f)
		seed, err := fuzzSeed(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		add(name, seed)
	}
	for _, pattern := range []string{"conformance/testdata/cases/*.json", "conformance/testdata/multirun/*.json", "conformance/testdata/subgraphs/*.json"} {
		for _, f := range glob(pattern) {
			name, data := read(f)
			var c struct {
				Spec json.RawMessage `json:"spec"`
			}
			if err := json.Unmarshal(data, &c); err != nil || c.Spec == nil {
				t.Fatalf("%s: no \"spec\" member (%v)", name, err)
			}
			add(name, c.Spec)
		}
	}
	for _, f := range glob("testdata/errors/*.txtar") {
		name, data := read(f)
		ar := txtar.Parse(data)
		i := slices.IndexFunc(ar.Files, func(f txtar.File) bool { return f.Name == "spec.json" })
		if i < 0 {
			t.Fatalf("%s: no spec.json", name)
		}
		add(name, ar.Files[i].Data)
	}
	name, data := read(filepath.Join(root, "conformance", "testdata", "predicates.json"))
	var table struct {
		Probe json.RawMessage `json:"probe"`
		Rows  []struct {
			When json.RawMessage `json:"when"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(data, &table); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	const slot = `"<row.when>"`
	if bytes.Count(table.Probe, []byte(slot)) != 1 || len(table.Rows) == 0 {
		t.Fatalf("%s: the probe has no single %s slot, or there are no rows", name, slot)
	}
	for i, row := range table.Rows {
		add(fmt.Sprintf("%s#rows[%d]", name, i), bytes.Replace(table.Probe, []byte(slot), row.When, 1))
	}
	return docs
}

// fuzzSeed reads a file of Go's fuzz corpus holding one []byte value.
func fuzzSeed(data []byte) ([]byte, error) {
	lines := strings.SplitN(strings.TrimSpace(string(data)), "\n", 2)
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		return nil, errors.New("not a go test fuzz v1 file")
	}
	lit, ok1 := strings.CutPrefix(lines[1], "[]byte(")
	lit, ok2 := strings.CutSuffix(lit, ")")
	if !ok1 || !ok2 {
		return nil, errors.New("not one []byte value")
	}
	s, err := strconv.Unquote(lit)
	return []byte(s), err
}

// TestSchemaRules checks the schema on documents made for one rule each,
// including the rules no testdata document breaks alone.
func TestSchemaRules(t *testing.T) {
	const base = `{"channels": {"c": {}}, "nodes": [{"id": "a", "type": "t"}], "edges": [{"from": "__start__", "to": "a"}, %s]}`
	edge := func(when string) string {
		return fmt.Sprintf(base, `{"from": "a", "to": "__end__", "when": `+when+`}`)
	}
	sub := func(config string) string {
		return `{"nodes": [{"id": "s", "type": "subgraph", "config": ` + config + `}], "edges": [{"from": "__start__", "to": "s"}]}`
	}
	tests := []struct {
		name string
		doc  string
		ok   bool
	}{
		{"minimal", `{"edges": [{"from": "__start__", "to": "__end__"}]}`, true},
		{"unknown members everywhere", `{"x": 1, "channels": {"c": {"x": 1}}, "nodes": [{"id": "a", "type": "t", "x": 1}], "edges": [{"from": "__start__", "to": "a", "x": 1}]}`, false},
		{"unknown member in a predicate", `{"channels": {"c": {}}, "edges": [{"from": "__start__", "to": "__end__", "when": {"channel": "c", "eq": 1, "note": 1}}]}`, false},
		{"extension members everywhere", `{"x-a": 1, "channels": {"c": {"x-a": 1}}, "nodes": [{"id": "a", "type": "t", "x-a": 1}], "edges": [{"from": "__start__", "to": "a", "x-a": 1, "when": {"channel": "c", "eq": 1, "x-a": {}}}]}`, true},
		{"$schema not a string", `{"$schema": 1, "edges": [{"from": "__start__", "to": "__end__"}]}`, false},
		{"$schema member", `{"$schema": "./schema.json", "edges": [{"from": "__start__", "to": "__end__"}]}`, true},
		{"null name", `{"name": null, "edges": [{"from": "__start__", "to": "__end__"}]}`, true},
		{"number name", `{"name": 1, "edges": [{"from": "__start__", "to": "__end__"}]}`, false},
		{"no edges member", `{"nodes": []}`, false},
		{"entry edge not first", `{"nodes": [{"id": "a", "type": "t"}], "edges": [{"from": "a", "to": "__end__"}, {"from": "__start__", "to": "a"}]}`, true},
		{"no entry edge", `{"nodes": [{"id": "a", "type": "t"}], "edges": [{"from": "a", "to": "__end__"}]}`, false},
		{"reducer append", `{"channels": {"c": {"reducer": "append"}}, "edges": [{"from": "__start__", "to": "__end__"}]}`, true},
		{"reducer null", `{"channels": {"c": {"reducer": null}}, "edges": [{"from": "__start__", "to": "__end__"}]}`, false},
		{"empty channel name", `{"channels": {"": {}}, "edges": [{"from": "__start__", "to": "__end__"}]}`, false},
		{"config null", `{"nodes": [{"id": "a", "type": "t", "config": null}], "edges": [{"from": "__start__", "to": "a"}]}`, true},
		{"config array", `{"nodes": [{"id": "a", "type": "t", "config": []}], "edges": [{"from": "__start__", "to": "a"}]}`, false},
		{"node id __end__", `{"nodes": [{"id": "__end__", "type": "t"}], "edges": [{"from": "__start__", "to": "__end__"}]}`, false},
		{"edge from __end__", fmt.Sprintf(base, `{"from": "__end__", "to": "a"}`), false},
		{"edge to __start__", fmt.Sprintf(base, `{"from": "a", "to": "__start__"}`), false},
		{"eq string", edge(`{"channel": "c", "eq": "x"}`), true},
		{"eq null", edge(`{"channel": "c", "eq": null}`), true},
		{"neq number", edge(`{"channel": "c", "neq": 1e400}`), true},
		{"in empty", edge(`{"channel": "c", "in": []}`), true},
		{"in scalars", edge(`{"channel": "c", "in": ["a", 1, true, null]}`), true},
		{"gt number", edge(`{"channel": "c", "gt": -2.5}`), true},
		{"lt string", edge(`{"channel": "c", "lt": "3"}`), false},
		{"truthy false", edge(`{"channel": "c", "truthy": false}`), true},
		{"truthy 1", edge(`{"channel": "c", "truthy": 1}`), false},
		{"eq object", edge(`{"channel": "c", "eq": {}}`), false},
		{"in nested", edge(`{"channel": "c", "in": [[1]]}`), false},
		{"no operator", edge(`{"channel": "c"}`), false},
		{"two operators", edge(`{"channel": "c", "gt": 1, "lt": 5}`), false},
		{"unknown operator", edge(`{"channel": "c", "equals": 1}`), false},
		{"operator and unknown member", edge(`{"channel": "c", "eq": 1, "note": "x"}`), false},
		{"no channel", edge(`{"eq": 1}`), false},
		{"when null", edge(`null`), false},
		{"subgraph", sub(`{"graph": "child", "fingerprint": "f", "in": {"x": "c"}, "out": {"c": "y"}}`), true},
		{"subgraph without config", `{"nodes": [{"id": "s", "type": "subgraph"}], "edges": [{"from": "__start__", "to": "s"}]}`, false},
		{"subgraph config null", sub(`null`), false},
		{"subgraph without graph", sub(`{"in": {}}`), false},
		{"subgraph empty graph", sub(`{"graph": ""}`), false},
		{"subgraph unknown member", sub(`{"graph": "g", "inn": {}}`), false},
		{"subgraph fingerprint number", sub(`{"graph": "g", "fingerprint": 1}`), false},
		{"subgraph in array", sub(`{"graph": "g", "in": []}`), false},
		{"subgraph out value number", sub(`{"graph": "g", "out": {"a": 1}}`), false},
		{"subgraph out empty name", sub(`{"graph": "g", "out": {"a": ""}}`), false},
		{"subgraph in empty key", sub(`{"graph": "g", "in": {"": "a"}}`), false},
		{"subgraph limit", sub(`{"graph": "g", "limit": 50}`), true},
		{"subgraph limit zero", sub(`{"graph": "g", "limit": 0}`), false},
		{"subgraph limit negative", sub(`{"graph": "g", "limit": -3}`), false},
		{"subgraph limit string", sub(`{"graph": "g", "limit": "5"}`), false},
		{"subgraph limit fraction", sub(`{"graph": "g", "limit": 2.5}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := spec.Decode("doc.json", []byte(tt.doc))
			if !diags.HasErrors() != tt.ok {
				t.Fatalf("test case is wrong: Decode says %v", diags)
			}
			err := schemaVerdict(t, []byte(tt.doc))
			if (err == nil) != tt.ok {
				t.Errorf("schema verdict %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestSchemaLimits checks that the schema bounds nodes and edges at
// spec.DefaultLimits, and that it agrees with Decode at the nodes' bound.
func TestSchemaLimits(t *testing.T) {
	var top struct {
		Properties map[string]struct {
			MaxItems int `json:"maxItems"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(spec.Schema(), &top); err != nil {
		t.Fatal(err)
	}
	if got, want := top.Properties["nodes"].MaxItems, spec.DefaultLimits.MaxNodes; got != want {
		t.Errorf("nodes maxItems %d, want spec.DefaultLimits.MaxNodes = %d", got, want)
	}
	if got, want := top.Properties["edges"].MaxItems, spec.DefaultLimits.MaxEdges; got != want {
		t.Errorf("edges maxItems %d, want spec.DefaultLimits.MaxEdges = %d", got, want)
	}
	if testing.Short() {
		t.Skip("a document of 100001 nodes takes a while under -short")
	}
	for _, n := range []int{spec.DefaultLimits.MaxNodes, spec.DefaultLimits.MaxNodes + 1} {
		var b strings.Builder
		b.WriteString(`{"nodes": [`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id": "n%d", "type": "t"}`, i)
		}
		b.WriteString(`], "edges": [{"from": "__start__", "to": "n0"}]}`)
		data := []byte(b.String())
		_, diags := spec.Decode("big.json", data)
		schemaErr := schemaVerdict(t, data)
		if diags.HasErrors() != (schemaErr != nil) || diags.HasErrors() != (n > spec.DefaultLimits.MaxNodes) {
			t.Errorf("%d nodes: Decode has errors %v, schema says %v", n, diags.HasErrors(), schemaErr)
		}
	}
}
