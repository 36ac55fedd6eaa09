package bound_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
	"github.com/ilmek-go/ilmek/testdata/golden/bound/boundgraph"
	"github.com/ilmek-go/ilmek/testdata/golden/bound/shop"
)

// registry serves the graph untyped: llm does nothing, mark logs its label.
var registry = runtime.Registry{
	"llm": func(spec.Node) (runtime.NodeFunc, error) {
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }, nil
	},
	"mark": func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg struct{ Label string }
		if err := json.Unmarshal(n.Config, &cfg); err != nil {
			return nil, err
		}
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{"messages": map[string]any{"role": "mark", "text": cfg.Label}}, nil
		}, nil
	},
}

// typedNodes implements boundgraph.Nodes directly.
type typedNodes struct{ t *testing.T }

func (n typedNodes) LLM(id boundgraph.NodeID, cfg shop.LLMOptions) (boundgraph.Node, error) {
	if cfg.Model != "m1" || cfg.Retries != 2 || cfg.MaxTokens != 100 || cfg.Temperature != 0.25 || len(cfg.Tools) != 1 || cfg.Stop == nil || *cfg.Stop != "END" || cfg.Seed != 18446744073709551615 {
		n.t.Errorf("LLM config %+v", cfg)
	}
	since := time.Date(2024, time.May, 1, 10, 0, 0, 500_000_000, time.FixedZone("", 2*60*60))
	if _, off := cfg.Since.Zone(); !cfg.Since.Equal(since) || off != 2*60*60 {
		n.t.Errorf("config since = %v, want %v in its stored offset", cfg.Since, since)
	}
	if cfg.Until == nil || !cfg.Until.Equal(time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)) || cfg.Until.Location() != time.UTC {
		n.t.Errorf("config until = %v, want 2025-01-01 UTC", cfg.Until)
	}
	return func(*runtime.Ctx, boundgraph.State) (boundgraph.Update, error) { return boundgraph.Update{}, nil }, nil
}

func (n typedNodes) Mark(id boundgraph.NodeID, cfg boundgraph.MarkConfig) (boundgraph.Node, error) {
	return func(*runtime.Ctx, boundgraph.State) (boundgraph.Update, error) {
		return boundgraph.Update{Messages: []shop.Message{{Role: "mark", Text: cfg.Label}}}, nil
	}, nil
}

// inputs are run inputs as JSON objects.
var inputs = []string{
	`{}`,
	`{"intent":"buy","attempts":1,"score":0.75,"ok":true}`,
	`{"intent":"pay","attempts":3,"score":0.5,"ok":false,"cart":null}`,
	`{"cart":{"items":["a"],"total":2},"tags":{"a":"b"},"messages":[{"role":"user","text":"hi"}]}`,
	`{"note":"x","score":0,"intent":""}`,
	`{"note":null,"attempts":-7,"score":-0.0}`,
}

// typedInput decodes a JSON input into an Update, field by field.
func typedInput(t *testing.T, in string) boundgraph.Update {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	var u boundgraph.Update
	if string(m["cart"]) == "null" {
		// A *shop.Cart field writes a cart; null is the adapter's.
		u = boundgraph.UpdateOf(runtime.Values{"cart": nil})
		delete(m, "cart")
	}
	var err error
	for k, raw := range m {
		switch k {
		case "intent":
			u.Intent = new(shop.Intent)
			err = json.Unmarshal(raw, u.Intent)
		case "attempts":
			u.Attempts = new(int)
			err = json.Unmarshal(raw, u.Attempts)
		case "score":
			u.Score = new(float64)
			err = json.Unmarshal(raw, u.Score)
		case "ok":
			u.Ok = new(bool)
			err = json.Unmarshal(raw, u.Ok)
		case "cart":
			err = json.Unmarshal(raw, &u.Cart)
		case "tags":
			err = json.Unmarshal(raw, &u.Tags)
		case "messages":
			err = json.Unmarshal(raw, &u.Messages)
		case "note":
			u.Note = new(any)
			err = json.Unmarshal(raw, u.Note)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return u
}

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
	adapted, err := boundgraph.New(boundgraph.FromRegistry(registry))
	if err != nil {
		t.Fatal(err)
	}
	typed, err := boundgraph.New(typedNodes{t})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		var input runtime.Values
		if err := json.Unmarshal([]byte(in), &input); err != nil {
			t.Fatal(err)
		}
		want, err := untyped.Invoke(context.Background(), input)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(want.State)
		for name, g := range map[string]*boundgraph.Graph{"adapted": adapted, "typed": typed} {
			got, err := g.Invoke(context.Background(), typedInput(t, in))
			if err != nil {
				t.Fatal(err)
			}
			gotJSON, err := got.State.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if eq, err := spec.JSONEqual(wantJSON, gotJSON); err != nil || !eq {
				t.Errorf("%s, input %s\n got %s\nwant %s", name, in, gotJSON, wantJSON)
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	g, err := boundgraph.New(typedNodes{t})
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

// TestPointerChannelUpdate: a channel bound to *shop.Cart is a *shop.Cart
// in the Update as in the State (not a **shop.Cart), written by a non-nil
// pointer; nil does not write it, and the adapter's null write still
// clears it, as the spec-built program's does.
func TestPointerChannelUpdate(t *testing.T) {
	c := &shop.Cart{Items: []string{"a"}, Total: 2}
	s := boundgraph.State{}.With(boundgraph.Update{Cart: c})
	if !s.HasCart() || s.Cart != c {
		t.Fatalf("after writing the cart: set %v, cart %v", s.HasCart(), s.Cart)
	}
	if s = s.With(boundgraph.Update{}); s.Cart != c {
		t.Fatalf("a nil Cart wrote the channel: %v", s.Cart)
	}
	null := boundgraph.UpdateOf(runtime.Values{"cart": nil})
	if data, err := json.Marshal(null); err != nil || string(data) != `{"cart":null}` {
		t.Fatalf("the adapter's null write encodes as %s, %v", data, err)
	}
	if s = s.With(null); !s.HasCart() || s.Cart != nil {
		t.Fatalf("after a null write: set %v, cart %v", s.HasCart(), s.Cart)
	}
	if u := boundgraph.UpdateOf(runtime.Values{"cart": map[string]any{"total": 3}}); u.Cart == nil || u.Cart.Total != 3 {
		t.Fatalf("the adapter's write of a cart: %+v", u.Cart)
	}
}
