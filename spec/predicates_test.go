package spec

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPredicateConstructors: each constructor gives exactly the Predicate
// that decoding the stored form gives.
func TestPredicateConstructors(t *testing.T) {
	cases := []struct {
		got    Predicate
		stored string
	}{
		{Eq("intent", "buy"), `{"channel": "intent", "eq": "buy"}`},
		{Eq("n", 2), `{"channel": "n", "eq": 2}`},
		{Eq("ok", true), `{"channel": "ok", "eq": true}`},
		{Eq("x", NullLit()), `{"channel": "x", "eq": null}`},
		{Neq("n", -1.5), `{"channel": "n", "neq": -1.5}`},
		{Neq("n", uint64(math.MaxUint64)), `{"channel": "n", "neq": 18446744073709551615}`},
		{In("code", 200, 201), `{"channel": "code", "in": [200, 201]}`},
		{In("code", Lit(200), Lit("ok"), NullLit()), `{"channel": "code", "in": [200, "ok", null]}`},
		{In[string]("code"), `{"channel": "code", "in": []}`},
		{Gt("amount", 1000), `{"channel": "amount", "gt": 1000}`},
		{Lt("amount", 0.1), `{"channel": "amount", "lt": 0.1}`},
		{Lt("amount", float32(0.1)), `{"channel": "amount", "lt": 0.1}`},
		{Gt("amount", 1e21), `{"channel": "amount", "gt": 1e+21}`},
		{Truthy("approved", false), `{"channel": "approved", "truthy": false}`},
	}
	for _, c := range cases {
		doc := `{"channels": {"intent": {}, "n": {}, "ok": {}, "x": {}, "code": {}, "amount": {}, "approved": {}},
"edges": [{"from": "__start__", "to": "__end__", "when": ` + c.stored + `}]}`
		g, ds := Decode("p.json", []byte(doc))
		if g == nil {
			t.Fatalf("%s: %v", c.stored, ds)
		}
		want := *g.Edges[0].When
		if diff := cmp.Diff(want, c.got, cmp.Comparer(func(a, b Literal) bool {
			return a.Kind == b.Kind && a.Str == b.Str && a.Bool == b.Bool && (a.Kind != LitNumber || normNumber(a.Num) == normNumber(b.Num))
		})); diff != "" {
			t.Errorf("%s (-stored +constructed):\n%s", c.stored, diff)
		}
		// And it validates and round-trips in a graph built in Go.
		g.Edges[0].When = &c.got
		if err := g.Validate().Err(); err != nil {
			t.Errorf("%s: %v", c.stored, err)
		}
	}
	// A float without a JSON form is refused at its path.
	g, _ := Decode("p.json", []byte(`{"channels": {"n": {}}, "edges": [{"from": "__start__", "to": "__end__"}]}`))
	g.Edges[0].When = new(Gt("n", math.Inf(1)))
	ds := g.Validate()
	if !ds.HasErrors() || ds[0].Path != "edges[0].when.gt" {
		t.Errorf("Gt(+Inf): %v", ds)
	}
}
