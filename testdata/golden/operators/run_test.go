package operators_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/genimpl"
	"github.com/ilmek-go/ilmek/spec"
	"github.com/ilmek-go/ilmek/testdata/golden/operators/opgraph"
)

// registry is the conformance test registry (write, copy, incr, noop, fail).
var registry = runtime.Registry{
	"noop": func(spec.Node) (runtime.NodeFunc, error) {
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }, nil
	},
	"write": func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg struct{ Update runtime.Values }
		if err := json.Unmarshal(n.Config, &cfg); err != nil {
			return nil, err
		}
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			var out runtime.Values
			b, _ := json.Marshal(cfg.Update)
			err := json.Unmarshal(b, &out)
			return out, err
		}, nil
	},
	"incr": func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg struct {
			Channel string
			By      float64
		}
		if err := json.Unmarshal(n.Config, &cfg); err != nil {
			return nil, err
		}
		return func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			cur, _ := runtime.Get[float64](s, cfg.Channel) // unset: 0; a generated state hands typed numbers
			return runtime.Values{cfg.Channel: cur + cfg.By}, nil
		}, nil
	},
	"fail": func(spec.Node) (runtime.NodeFunc, error) {
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, errors.New("fail") }, nil
	},
}

// inputs are values of v to route on; absent means v is never written.
var inputs = []string{"", `"abc"`, `""`, `5`, `5.0`, `"5"`, `2.5`, `null`, `true`, `false`, `0`, `-0.0`, `101`, `100`, `-1`, `[]`, `["abc"]`, `{}`, `{"a":1}`, `1e400`}

func TestRoutingMatchesFromSpec(t *testing.T) {
	data, err := os.ReadFile("spec.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, diags := spec.Decode("spec.json", data)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	untyped, err := runtime.FromSpec(doc, registry)
	if err != nil {
		t.Fatal(err)
	}
	typed, err := opgraph.New(opgraph.FromRegistry(registry))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		t.Run(in, func(t *testing.T) {
			input := runtime.Values{}
			if in != "" {
				var v any
				if err := json.Unmarshal([]byte(in), &v); err != nil {
					v = in // 1e400 does not decode: keep it as a string
				}
				input["v"] = v
			}
			want, err := untyped.Invoke(context.Background(), input)
			if err != nil {
				t.Fatal(err)
			}
			var u opgraph.Update
			if v, ok := input["v"]; ok {
				u.V = new(v)
			}
			got, err := typed.Invoke(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, _ := json.Marshal(want.State)
			gotJSON, err := got.State.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if eq, err := spec.JSONEqual(wantJSON, gotJSON); err != nil || !eq {
				t.Errorf("v=%s\n got %s\nwant %s", in, gotJSON, wantJSON)
			}
			if got.Supersteps != want.Supersteps {
				t.Errorf("supersteps %d, want %d", got.Supersteps, want.Supersteps)
			}
		})
	}
}

func TestReducers(t *testing.T) {
	var s opgraph.State
	s = s.With(opgraph.Update{Hits: []any{"a"}, Meta: map[string]any{"k": 1}, N: new(any(nil))})
	s2 := s.With(opgraph.Update{Hits: []any{"b"}, Meta: map[string]any{"k": 2, "j": 3}})
	s3 := s.With(opgraph.Update{Hits: []any{"c"}})
	if !slices.Equal(s2.Hits, []any{"a", "b"}) || !slices.Equal(s3.Hits, []any{"a", "c"}) {
		t.Errorf("append shares storage between states: %v %v", s2.Hits, s3.Hits)
	}
	if fmt.Sprint(s.Meta) != "map[k:1]" || fmt.Sprint(s2.Meta) != "map[j:3 k:2]" {
		t.Errorf("merge: %v %v", s.Meta, s2.Meta)
	}
	if !s.HasN() || s.HasV() {
		t.Errorf("presence: HasN %v HasV %v", s.HasN(), s.HasV())
	}
	got, _ := s2.MarshalJSON()
	if string(got) != `{"hits":["a","b"],"meta":{"j":3,"k":2},"n":null}` {
		t.Errorf("encoding %s", got)
	}
	var back opgraph.State
	if err := back.UnmarshalJSON(got); err != nil || !back.HasN() || back.HasV() {
		t.Errorf("decode: %v %+v", err, back)
	}
	empty, _ := opgraph.State{}.MarshalJSON()
	if string(empty) != `{"hits":[],"meta":{}}` {
		t.Errorf("empty state encodes as %s", empty)
	}
}

func TestUndeclaredWriteIsReduceError(t *testing.T) {
	reg := runtime.Registry{}
	for k, v := range registry {
		reg[k] = v
	}
	reg["incr"] = func(spec.Node) (runtime.NodeFunc, error) {
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"nope": 1}, nil }, nil
	}
	g, err := opgraph.New(opgraph.FromRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Invoke(context.Background(), opgraph.Update{})
	var re *runtime.ReduceError
	var ce *runtime.ChannelError
	if !errors.As(err, &re) || !errors.As(err, &ce) || ce.Channel != "nope" {
		t.Fatalf("got %v, want a ReduceError on channel nope", err)
	}
	reg["incr"] = func(spec.Node) (runtime.NodeFunc, error) {
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"meta": "x"}, nil }, nil
	}
	g, _ = opgraph.New(opgraph.FromRegistry(reg))
	if _, err = g.Invoke(context.Background(), opgraph.Update{}); !errors.As(err, &re) || !errors.As(err, &ce) || ce.Channel != "meta" {
		t.Fatalf("merge of a string: got %v, want a ReduceError on channel meta", err)
	}
}

func TestMissingTypeFailsNew(t *testing.T) {
	_, err := opgraph.New(opgraph.FromRegistry(runtime.Registry{"noop": registry["noop"]}))
	var se *runtime.SpecError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a SpecError", err)
	}
}

func TestGotoFromRegistry(t *testing.T) {
	reg := runtime.Registry{}
	for k, v := range registry {
		reg[k] = v
	}
	reg["noop"] = func(spec.Node) (runtime.NodeFunc, error) {
		return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if ctx.Node() == "probe" {
				ctx.Command(runtime.To("eq_str"), runtime.SendTo("counter", runtime.Values{"n": 10}))
			}
			return nil, nil
		}, nil
	}
	g, err := opgraph.New(opgraph.FromRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(context.Background(), opgraph.Update{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := res.State.MarshalJSON()
	if string(got) != `{"hits":["eq_str"],"meta":{},"n":11}` {
		t.Errorf("state %s", got)
	}
	reg["noop"] = func(spec.Node) (runtime.NodeFunc, error) {
		return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			ctx.Command(runtime.To("nowhere"))
			return nil, nil
		}, nil
	}
	g, _ = opgraph.New(opgraph.FromRegistry(reg))
	var ne *runtime.NodeError
	var ut *runtime.UnknownTargetError
	if _, err := g.Invoke(context.Background(), opgraph.Update{}); !errors.As(err, &ne) || !errors.As(err, &ut) || ut.Target != "nowhere" {
		t.Errorf("goto unknown node: %v, want a NodeError wrapping an UnknownTargetError for nowhere", err)
	}
}

func TestRoundTrip(t *testing.T) {
	g, err := opgraph.New(opgraph.FromRegistry(registry))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := runtime.ToSpec(g)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile("spec.json")
	if eq, err := spec.JSONEqual(doc.Encode(), want); err != nil || !eq {
		t.Errorf("round trip differs (%v):\n%s", err, doc.Encode())
	}
}

// TestReduceAllocs checks that folding a last_write and an append write
// allocates nothing beyond the append's growth.
func TestReduceAllocs(t *testing.T) {
	g, err := opgraph.New(opgraph.FromRegistry(registry))
	if err != nil {
		t.Fatal(err)
	}
	p := genimpl.ProgramOf(g)
	v := any("x")
	ups := []opgraph.Update{{V: &v}, {Hits: []any{v}}}
	s := p.Zero()
	allocs := testing.AllocsPerRun(1000, func() { s, _, _ = p.Reduce(s, ups) })
	if allocs != 0 {
		t.Errorf("Reduce allocates %v times per call", allocs)
	}
	if len(s.Hits) != 1001 || s.V != "x" {
		t.Errorf("state after the runs: %d hits, v %v", len(s.Hits), s.V)
	}
}
