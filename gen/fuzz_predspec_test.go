package gen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/spec"
)

// The predicate probe graph (testdata/predfuzz) of FuzzPredicatesAgree: one
// node "probe" whose edges guard every operator, with every kind of
// literal, on a channel of every Go type the generator compiles guards for,
// each edge leading to its own "hit" node. This file builds its document
// (predSpec), keeps the committed copy and package up to date, and checks
// which guards the generator refuses (TestPredicateGuardRules).

// predDir is the directory of the probe graph.
const predDir = "testdata/predfuzz"

// guardClass is how the generator compiles a guard on a channel, by the
// channel's Go type and reducer (see guards.go).
type guardClass int

const (
	classAny        guardClass = iota // unbound, or an unbound append/merge channel: every predicate compiles
	classString                       // a string kind
	classNumber                       // a numeric kind
	classBool                         // a boolean
	classPtrString                    // a pointer to a string: also null
	classPtrNumber                    // a pointer to a number: also null
	classNullable                     // a last_write slice or map: null and truthiness only
	classCollection                   // a bound append or merge channel: truthiness only
)

// predChan is one channel of the probe graph.
type predChan struct {
	name    string
	reducer spec.Reducer // "" for last_write
	gotype  string       // the --type binding; "" when unbound
	class   guardClass
}

// predChans are the channels of the probe graph; their bindings are those
// of the //go:generate line in testdata/predfuzz/doc.go (checked by
// TestPredfuzzSpec). hits, bound to []string, collects the hit nodes that
// ran and is never guarded.
var predChans = []predChan{
	{name: "v", class: classAny},
	{name: "aa", reducer: spec.Append, class: classAny},
	{name: "ma", reducer: spec.Merge, class: classAny},
	{name: "s", gotype: "string", class: classString},
	{name: "f", gotype: "float64", class: classNumber},
	{name: "f32", gotype: "float32", class: classNumber},
	{name: "i", gotype: "int", class: classNumber},
	{name: "u", gotype: "uint64", class: classNumber},
	{name: "d", gotype: "time.Duration", class: classNumber},
	{name: "b", gotype: "bool", class: classBool},
	{name: "ps", gotype: "*string", class: classPtrString},
	{name: "pf", gotype: "*float64", class: classPtrNumber},
	{name: "ls", gotype: "[]string", class: classNullable},
	{name: "lm", gotype: "map[string]int", class: classNullable},
	{name: "as", reducer: spec.Append, gotype: "[]string", class: classCollection},
	{name: "ms", reducer: spec.Merge, gotype: "map[string]int", class: classCollection},
}

// Literal pools of the guards: every kind, with the values where JSON and
// Go disagree (-0, 0.1 as a float32, numbers beyond float64 and past 2^53,
// U+FFFD, which invalid UTF-8 becomes in JSON, NUL).
var (
	predStrings = []string{"", "abc", "5", "\uFFFD", "a\x00b"}
	predNumbers = []string{"0", "-0", "5", "2.5", "-3", "0.1", "1e400", "-1e400", "9007199254740993", "1e-400"}
	predLists   = [][]spec.Literal{
		{},
		{strLit("abc"), strLit("x")},
		{strLit("")},
		{strLit("abc"), {Kind: spec.LitNull}},
		{numLit("1"), numLit("2"), numLit("3")},
		{numLit("2.5"), numLit("-1")},
		{numLit("0")},
		{numLit("5"), {Kind: spec.LitNull}},
		{boolLit(true)},
		{boolLit(false)},
		{{Kind: spec.LitNull}},
		{numLit("-3"), strLit("abc"), {Kind: spec.LitNull}, boolLit(false)},
	}
)

func strLit(s string) spec.Literal { return spec.Literal{Kind: spec.LitString, Str: s} }
func numLit(s string) spec.Literal { return spec.Literal{Kind: spec.LitNumber, Num: s} }
func boolLit(b bool) spec.Literal  { return spec.Literal{Kind: spec.LitBool, Bool: b} }
func scalarLits() (out []spec.Literal) { // every scalar of the pools
	for _, s := range predStrings {
		out = append(out, strLit(s))
	}
	for _, n := range predNumbers {
		out = append(out, numLit(n))
	}
	return append(out, boolLit(true), boolLit(false), spec.Literal{Kind: spec.LitNull})
}

// allPredicates lists every predicate of the pools on channel ch: eq and
// neq with every scalar, in with every list, gt and lt with every number,
// truthy true and false.
func allPredicates(ch string) []*spec.Predicate {
	var out []*spec.Predicate
	for _, op := range []spec.Op{spec.OpEq, spec.OpNeq} {
		for _, l := range scalarLits() {
			out = append(out, &spec.Predicate{Channel: ch, Op: op, Value: l})
		}
	}
	for _, list := range predLists {
		out = append(out, &spec.Predicate{Channel: ch, Op: spec.OpIn, Values: list})
	}
	for _, op := range []spec.Op{spec.OpGt, spec.OpLt} {
		for _, n := range predNumbers {
			out = append(out, &spec.Predicate{Channel: ch, Op: op, Value: numLit(n)})
		}
	}
	for _, b := range []bool{true, false} {
		out = append(out, &spec.Predicate{Channel: ch, Op: spec.OpTruthy, Value: boolLit(b)})
	}
	return out
}

// litFits reports whether a literal can equal a value of the class: the
// rule the generator must apply to eq, neq and in (an operand that can
// never equal the channel is a generation error).
func litFits(c guardClass, l spec.Literal) bool {
	switch c {
	case classAny:
		return true
	case classString:
		return l.Kind == spec.LitString
	case classNumber:
		return l.Kind == spec.LitNumber
	case classBool:
		return l.Kind == spec.LitBool
	case classPtrString:
		return l.Kind == spec.LitString || l.Kind == spec.LitNull
	case classPtrNumber:
		return l.Kind == spec.LitNumber || l.Kind == spec.LitNull
	case classNullable:
		return l.Kind == spec.LitNull
	}
	return false
}

// guardAccepted is the generator's rule, restated: which predicates on a
// channel of class c compile (the others are generation errors, because
// they can never hold or never fail for every value of the type).
func guardAccepted(c guardClass, p *spec.Predicate) bool {
	if c == classAny {
		return true
	}
	switch p.Op {
	case spec.OpEq, spec.OpNeq:
		return litFits(c, p.Value)
	case spec.OpIn:
		for _, l := range p.Values {
			if !litFits(c, l) {
				return false
			}
		}
		return true // in [] never holds, on any type
	case spec.OpGt, spec.OpLt:
		return c == classNumber || c == classPtrNumber
	case spec.OpTruthy:
		return true
	}
	return false
}

// predSpec builds the probe graph: with every predicate of allPredicates
// on every channel when all is set (TestPredicateGuardRules), else only
// those guardAccepted (the committed testdata/predfuzz/spec.json).
func predSpec(all bool) *spec.Graph {
	g := &spec.Graph{Name: "predicate probe", NameKind: spec.Set, Channels: []spec.Channel{{Name: "hits", Reducer: spec.Append}}}
	for _, c := range predChans {
		g.Channels = append(g.Channels, spec.Channel{Name: c.name, Reducer: c.reducer})
	}
	sort.Slice(g.Channels, func(i, j int) bool { return g.Channels[i].Name < g.Channels[j].Name })
	g.Nodes = []spec.Node{{ID: "probe", Type: "probe"}}
	g.Edges = []spec.Edge{{From: spec.Start, To: "probe"}}
	for _, c := range predChans {
		for _, p := range allPredicates(c.name) {
			if !all && !guardAccepted(c.class, p) {
				continue
			}
			id := fmt.Sprintf("e%03d", len(g.Edges))
			g.Nodes = append(g.Nodes, spec.Node{ID: id, Type: "hit"})
			g.Edges = append(g.Edges, spec.Edge{From: "probe", To: id, When: p})
		}
	}
	return g
}

// predOptions are the generator's options for the probe graph g, with the
// bindings of predChans: those of the //go:generate line of
// testdata/predfuzz/doc.go, which TestExamplesUpToDate (gen_test) replays
// with ilmekgen's own parser. TestPredfuzzSpec checks that both generate
// the committed package.
func predOptions(t testing.TB, g *spec.Graph) Options {
	t.Helper()
	bs := BindingSpec{Channels: map[string]string{"hits": "[]string"}}
	for _, c := range predChans {
		if c.gotype != "" {
			bs.Channels[c.name] = c.gotype
		}
	}
	opts := Options{Package: "predgraph", PkgPath: modulePath + "/gen/" + predDir + "/predgraph", Source: "../spec.json"}
	b, diags := LoadBindings(g, bs, LoadConfig{Dir: filepath.Join(moduleRoot(t), "gen", filepath.FromSlash(predDir)), OutPkgPath: opts.PkgPath})
	if diags.HasErrors() {
		t.Fatalf("the bindings of predChans: %v", diags.Errors())
	}
	opts.Bindings = b
	return opts
}

// TestPredfuzzSpec checks that testdata/predfuzz/spec.json is predSpec
// (-update rewrites it), and that the committed package predgraph is what
// the generator writes for it today with the bindings of predChans; since
// TestExamplesUpToDate checks that it is what the //go:generate line of
// doc.go writes, that line binds each channel as predChans says.
func TestPredfuzzSpec(t *testing.T) {
	dir := filepath.Join(moduleRoot(t), "gen", filepath.FromSlash(predDir))
	g := predSpec(false)
	data := g.Encode()
	path := filepath.Join(dir, "spec.json")
	updateCmd := "go test ./gen -run TestPredfuzzSpec -update"
	if *update {
		if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, data) {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	} else if old, err := os.ReadFile(path); err != nil {
		t.Fatalf("%v; run %s", err, updateCmd)
	} else if diff := cmp.Diff(string(old), string(data)); diff != "" {
		t.Fatalf("%s is not predSpec (-committed +predSpec):\n%s\nrun: %s", path, diff, updateCmd)
	}
	if ds := g.Validate(); ds.HasErrors() {
		t.Fatalf("predSpec is not a valid document: %v", ds.Errors())
	}
	g, diags := spec.Decode("spec.json", data)
	if diags.HasErrors() {
		t.Fatalf("predSpec does not decode: %v", diags.Errors())
	}
	opts := predOptions(t, g)
	files, diags := Generate(g, opts)
	if diags.HasErrors() {
		t.Fatalf("the probe graph does not generate:\n%v", diags)
	}
	for _, f := range files {
		p := filepath.Join(dir, "predgraph", f.Name)
		if old, err := os.ReadFile(p); err != nil || !bytes.Equal(old, f.Data) {
			t.Errorf("%s is not what predSpec and the bindings of predChans generate (%v): the //go:generate line of %s/doc.go must bind each channel as predChans says; then run go generate ./gen/%s", p, err, predDir, predDir)
		}
	}
	if raceEnabled() {
		return // type-checking 7,000 generated lines takes seconds under -race
	}
	// The checks of every generated package, with bound channels; the
	// canary comparison does not apply, since guards on typed channels
	// compile differently for different literals.
	checkGenerated(t, g, opts, files, checkOptions{imports: []string{"time"}, noCanary: true})
}

// TestPredicateGuardRules generates the probe graph with every predicate
// on every typed channel and checks that the generator refuses exactly
// those guardAccepted rejects, each with an error at the edge's "when"
// naming the channel's Go type.
func TestPredicateGuardRules(t *testing.T) {
	g, ds := spec.Decode("all.json", predSpec(true).Encode())
	if ds.HasErrors() {
		t.Fatal(ds.Errors())
	}
	classOf := map[string]predChan{}
	for _, c := range predChans {
		classOf[c.name] = c
	}
	files, diags := Generate(g, predOptions(t, g))
	if len(files) != 0 {
		t.Fatal("Generate wrote files for a document with refused guards")
	}
	refused := map[string]spec.Diagnostic{}
	for _, d := range diags.Errors() {
		refused[d.Path] = d
	}
	checkDiagnostics(t, diags.Errors())
	for i, e := range g.Edges {
		if e.When == nil {
			continue
		}
		c := classOf[e.When.Channel]
		path := spec.PathKey(spec.PathIndex("edges", i), "when")
		d, isRefused := refused[path]
		delete(refused, path)
		switch accepted := guardAccepted(c.class, e.When); {
		case accepted && isRefused:
			t.Errorf("%s (%s on %s %s) is refused: %s", path, predicateText(e.When), c.name, c.gotype, d.Message)
		case !accepted && !isRefused:
			t.Errorf("%s (%s on %s %s) compiles, but can never hold or never fail", path, predicateText(e.When), c.name, c.gotype)
		case !accepted && !strings.Contains(d.Message, c.gotype):
			t.Errorf("%s: the refusal does not name the type %s: %s", path, c.gotype, d.Message)
		}
	}
	for path, d := range refused {
		t.Errorf("unexpected error at %s: %s", path, d)
	}
}
