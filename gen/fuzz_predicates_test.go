package gen

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/gen/testdata/predfuzz/predgraph"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// FuzzPredicatesAgree checks that the guards the generator compiles route
// exactly as the spec-built program's evaluation, spec.Predicate.Holds, on the
// value the spec-built program would hold for the channel. It runs the
// committed probe graph (testdata/predfuzz, see fuzz_predspec_test.go) with
// random channel values, set or unset, and compares the hit nodes that
// ran — the targets the generated Plan planned — with the edges whose
// predicate spec.Predicate.Holds accepts. The value spec.Predicate.Holds sees is the
// channel's JSON value for bound channels (what Adapt hands an untyped
// node, and what a checkpoint stores), the Go value itself for unbound
// ones; an unset last_write channel is unset (not null), and an append or
// merge channel is never unset (nil reads as [] or {}). Values JSON cannot
// hold (NaN, ±Inf) are compared as they are.
//
// The inputs build every channel's value: vJSON the unbound channel's
// (decoded as JSON, or the text itself when it is not JSON), str, num, n
// and flag the typed ones, and the bits of mask which channels are set
// and which Go representation each value takes. The rows of
// conformance/testdata/predicates.json are seeds.
func FuzzPredicatesAgree(f *testing.F) {
	for _, s := range predicateSeeds(f) {
		f.Add(s.vJSON, s.str, s.num, s.n, s.flag, s.mask)
	}
	probe := loadProbe(f)
	f.Fuzz(func(t *testing.T, vJSON []byte, str string, num float64, n int64, flag bool, mask uint64) {
		in := probeInput(vJSON, str, num, n, flag, mask)
		probe.check(t, in)
	})
}

// predicateSeed is one input of FuzzPredicatesAgree.
type predicateSeed struct {
	vJSON []byte
	str   string
	num   float64
	n     int64
	flag  bool
	mask  uint64
}

// allSet sets every last_write channel and writes every append and merge
// channel, each as a non-nil value.
const allSet = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<12 | 1<<15 | 1<<17 | 1<<18 | 1<<19 | 1<<20

// predicateSeeds turns every row of conformance/testdata/predicates.json
// whose predicate ilmek accepts into an input: the row's value goes to the
// unbound channel and, when its kind fits, to the typed ones; an absent
// value leaves every channel unset. Hand-picked values where Go and JSON
// disagree follow.
func predicateSeeds(t testing.TB) []predicateSeed {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "conformance", "testdata", "predicates.json"))
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Rows []struct {
			Value  json.RawMessage `json:"value"`
			Expect any             `json:"expect"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(data, &table); err != nil {
		t.Fatalf("conformance/testdata/predicates.json: %v", err)
	}
	var seeds []predicateSeed
	for _, row := range table.Rows {
		if _, ok := row.Expect.(bool); !ok {
			continue // "invalid": the decoder refuses the predicate
		}
		s := predicateSeed{vJSON: row.Value}
		if row.Value != nil {
			s.mask = allSet
			var v any
			if err := json.Unmarshal(row.Value, &v); err == nil {
				switch v := v.(type) {
				case string:
					s.str = v
				case float64:
					s.num, s.n = v, int64(v)
				case bool:
					s.flag = v
				}
			}
		}
		seeds = append(seeds, s)
	}
	if len(seeds) < 100 {
		t.Fatalf("only %d usable rows in conformance/testdata/predicates.json", len(seeds))
	}
	return append(seeds,
		predicateSeed{vJSON: []byte("0.1"), num: float64(float32(0.1)), n: 0, mask: allSet},
		predicateSeed{vJSON: []byte("0.1"), num: 0.1, mask: allSet | 5<<32},
		predicateSeed{vJSON: []byte("NaN"), num: math.NaN(), mask: allSet | 2<<32},
		predicateSeed{vJSON: []byte("1e400"), num: math.Inf(1), mask: allSet},
		predicateSeed{vJSON: []byte("-1e400"), num: math.Inf(-1), n: math.MinInt64, mask: allSet},
		predicateSeed{vJSON: []byte("9007199254740993"), num: 9007199254740993, n: 9007199254740993, mask: allSet},
		predicateSeed{vJSON: []byte("-0.0"), num: math.Copysign(0, -1), mask: allSet},
		predicateSeed{vJSON: []byte(`"\ufffd"`), str: "\xff", mask: allSet},
		predicateSeed{vJSON: []byte(`"a\u0000b"`), str: "a\x00b", mask: allSet | 1<<13 | 1<<16},
		predicateSeed{vJSON: []byte(`[]`), str: "", n: -1, mask: allSet | 1<<14 | 6<<32},
		predicateSeed{vJSON: []byte(`{}`), str: "k", n: 2, mask: allSet | 7<<32},
		predicateSeed{vJSON: []byte(`abc`), str: "abc", n: 5, flag: true, mask: 1<<0 | 1<<1 | 3<<32},
		predicateSeed{vJSON: []byte(`true`), flag: true, mask: allSet | 4<<32},
		predicateSeed{vJSON: []byte(`5`), num: 5, n: 5, mask: allSet | 1<<9 | 1<<11},
	)
}

// probeInput builds the run input of the probe graph from a fuzz input:
// bit 0 of mask sets v, bits 1 to 7 s, f, f32, i, u, d and b; bits 8 and
// 10 set ps and pf, bits 9 and 11 make them nil; bit 12 sets ls (bit 13:
// nil, bit 14: empty, else str split at commas); bit 15 sets lm (bit 16:
// nil, else n%3 keys); bits 17 to 20 write as, ms, aa and ma. Bits 32 to
// 34 choose v's Go representation: the decoded JSON, str, num, n,
// flag, float32(num), []string{str} or map[string]int{str: n}.
func probeInput(vJSON []byte, str string, num float64, n int64, flag bool, mask uint64) predgraph.Update {
	bit := func(i int) bool { return mask&(1<<i) != 0 }
	// A pointer channel's Update field is the pointer (nil: not written);
	// only the adapter writes null to it.
	nulls := runtime.Values{}
	if bit(8) && bit(9) {
		nulls["ps"] = nil
	}
	if bit(10) && bit(11) {
		nulls["pf"] = nil
	}
	u := predgraph.UpdateOf(nulls)
	if bit(0) {
		var v any
		switch (mask >> 32) & 7 {
		case 0:
			if err := json.Unmarshal(vJSON, &v); err != nil {
				v = string(vJSON)
			}
		case 1:
			v = str
		case 2:
			v = num
		case 3:
			v = n
		case 4:
			v = flag
		case 5:
			v = float32(num)
		case 6:
			v = []string{str}
		case 7:
			v = map[string]int{str: int(n)}
		}
		u.V = &v
	}
	if bit(1) {
		u.S = &str
	}
	if bit(2) {
		u.F = &num
	}
	if bit(3) {
		u.F32 = new(float32(num))
	}
	if bit(4) {
		u.I = new(int(n))
	}
	if bit(5) {
		u.U = new(uint64(n))
	}
	if bit(6) {
		u.D = new(time.Duration(n))
	}
	if bit(7) {
		u.B = &flag
	}
	if bit(8) && !bit(9) {
		u.Ps = &str
	}
	if bit(10) && !bit(11) {
		u.Pf = &num
	}
	if bit(12) {
		var l []string
		switch {
		case bit(13):
		case bit(14):
			l = []string{}
		default:
			l = strings.Split(str, ",")
		}
		u.Ls = &l
	}
	if bit(15) {
		var m map[string]int
		if !bit(16) {
			m = map[string]int{}
			for k := range int(uint64(n) % 3) {
				m[fmt.Sprint(k)] = k
			}
		}
		u.Lm = &m
	}
	if bit(17) {
		u.As = strings.Split(str, ",")
	}
	if bit(18) {
		u.Ms = map[string]int{str: int(n)}
	}
	if bit(19) {
		var v any
		if json.Unmarshal(vJSON, &v) != nil {
			v = str
		}
		u.Aa = []any{v}
	}
	if bit(20) {
		u.Ma = map[string]any{str: num}
	}
	return u
}

// probe is the probe graph, built once per process, with the guards of
// its document.
type probe struct {
	graph *predgraph.Graph
	doc   *spec.Graph
	chans map[string]predChan
}

var loadProbeOnce = sync.OnceValues(func() (*probe, error) {
	g, err := predgraph.New(probeNodes{})
	if err != nil {
		return nil, err
	}
	doc, err := runtime.ToSpec(g)
	if err != nil {
		return nil, err
	}
	p := &probe{graph: g, doc: doc, chans: map[string]predChan{}}
	for _, c := range predChans {
		p.chans[c.name] = c
	}
	return p, nil
})

func loadProbe(t testing.TB) *probe {
	t.Helper()
	p, err := loadProbeOnce()
	if err != nil {
		t.Fatalf("building the probe graph: %v", err)
	}
	if !spec.Equal(p.doc, predSpec(false)) {
		t.Fatal("testdata/predfuzz/predgraph was not generated from predSpec; run go test ./gen -run TestPredfuzzSpec -update, then go generate ./gen/testdata/predfuzz")
	}
	return p
}

// probeNodes builds the probe graph's nodes: the probe writes nothing, and
// every hit node records its id in the channel hits.
type probeNodes struct{}

func (probeNodes) Probe(predgraph.NodeID, predgraph.ProbeConfig) (predgraph.Node, error) {
	return func(*runtime.Ctx, predgraph.State) (predgraph.Update, error) { return predgraph.Update{}, nil }, nil
}

func (probeNodes) Hit(id predgraph.NodeID, _ predgraph.HitConfig) (predgraph.Node, error) {
	name := id.String()
	return func(*runtime.Ctx, predgraph.State) (predgraph.Update, error) {
		return predgraph.Update{Hits: []string{name}}, nil
	}, nil
}

// check runs the probe graph with input in and compares the hit nodes with
// spec.Predicate.Holds on the state the probe node saw.
func (p *probe) check(t *testing.T, in predgraph.Update) {
	t.Helper()
	res, err := p.graph.Invoke(context.Background(), in)
	if err != nil {
		t.Fatalf("the probe graph failed: %v", err)
	}
	got := map[string]bool{}
	for _, h := range res.State.Hits {
		got[h] = true
	}
	state := res.State
	var diffs []string
	for _, e := range p.doc.Edges {
		if e.When == nil {
			continue
		}
		v, set := p.view(state, e.When.Channel)
		want := e.When.Holds(v, set)
		if got[e.To] != want {
			diffs = append(diffs, fmt.Sprintf("%s: %s on %s (%s) = %#v, set %v: generated %v, spec.Predicate.Holds %v",
				e.To, predicateText(e.When), e.When.Channel, p.chans[e.When.Channel].gotype, v, set, got[e.To], want))
		}
	}
	if len(diffs) > 0 {
		if len(diffs) > 20 {
			diffs = append(diffs[:20], fmt.Sprintf("... and %d more", len(diffs)-20))
		}
		t.Fatalf("generated guards and spec.Predicate.Holds disagree:\n\t%s", strings.Join(diffs, "\n\t"))
	}
}

// view returns the value spec.Predicate.Holds sees for channel name of s in the
// spec-built program, and whether it is set.
func (p *probe) view(s predgraph.State, name string) (any, bool) {
	c := p.chans[name]
	field, _ := GoName(name)
	rv := reflect.ValueOf(s)
	fv := rv.FieldByName(field)
	if c.reducer == "" {
		set := rv.MethodByName("Has" + field).Call(nil)[0].Bool()
		if !set {
			return nil, false
		}
		if c.gotype == "" {
			return fv.Interface(), true
		}
		return jsonView(fv.Interface()), true
	}
	// An append or merge channel is never unset; nil reads as empty.
	if fv.IsNil() {
		if c.reducer == spec.Append {
			return []any{}, true
		}
		return map[string]any{}, true
	}
	if c.gotype == "" {
		return fv.Interface(), true
	}
	return jsonView(fv.Interface()), true
}

// jsonView returns the untyped value encoding/json decodes x's JSON to, as
// the spec-built program sees a bound channel's value; x itself (or what
// it points to) when JSON cannot hold it (NaN, ±Inf).
func jsonView(x any) any {
	data, err := json.Marshal(x)
	if err != nil {
		rv := reflect.ValueOf(x)
		for rv.Kind() == reflect.Pointer {
			if rv.IsNil() {
				return nil
			}
			rv = rv.Elem()
		}
		return rv.Interface()
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		panic(fmt.Sprintf("jsonView(%#v): %v", x, err))
	}
	return v
}

// TestProbeViews checks the probe harness itself on a few states: the
// views it computes are the JSON values the spec-built program holds.
func TestProbeViews(t *testing.T) {
	p := loadProbe(t)
	res, err := p.graph.Invoke(context.Background(), probeInput([]byte(`"x"`), "a,b", 0.5, 5, true, allSet|1<<9))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ch   string
		want any
		set  bool
	}{
		{"v", "x", true},
		{"s", "a,b", true},
		{"f32", 0.5, true},
		{"d", 5.0, true},
		{"ps", nil, true},
		{"pf", 0.5, true},
		{"ls", []any{"a", "b"}, true},
		{"lm", map[string]any{"0": 0.0, "1": 1.0}, true},
		{"as", []any{"a", "b"}, true},
		{"ma", map[string]any{"a,b": 0.5}, true},
	} {
		v, set := p.view(res.State, tc.ch)
		if !reflect.DeepEqual(v, tc.want) || set != tc.set {
			t.Errorf("view of %s = %#v, set %v; want %#v, %v", tc.ch, v, set, tc.want, tc.set)
		}
	}
	res, err = p.graph.Invoke(context.Background(), probeInput(nil, "", 0, 0, false, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range []string{"v", "s", "f", "b", "ps", "ls"} {
		if _, set := p.view(res.State, ch); set {
			t.Errorf("channel %s is set with no input", ch)
		}
	}
	if v, set := p.view(res.State, "as"); !set || !reflect.DeepEqual(v, []any{}) {
		t.Errorf("unwritten append channel reads %#v, %v; want [], true", v, set)
	}
	if len(res.State.Hits) == 0 {
		t.Error("no hit node ran on the empty state (neq guards always hold there)")
	}
}
