package gen_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/spec"
)

// shuffled re-encodes JSON with every object's keys in a random order.
func shuffled(t *testing.T, data []byte, r *rand.Rand) []byte {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	var write func(v any)
	write = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			b.WriteString("{\n")
			for i, k := range keys {
				if i > 0 {
					b.WriteString(",\n")
				}
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteString(": ")
				write(v[k])
			}
			b.WriteString("}")
		case []any:
			b.WriteString("[")
			for i, e := range v {
				if i > 0 {
					b.WriteString(", ")
				}
				write(e)
			}
			b.WriteString("]")
		case json.Number:
			b.WriteString(string(v))
		default:
			vb, _ := json.Marshal(v)
			b.Write(vb)
		}
	}
	write(v)
	return b.Bytes()
}

// TestKeyOrderIrrelevant generates every golden case from its spec with
// the object keys shuffled and expects the committed bytes.
func TestKeyOrderIrrelevant(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, inv := range goldenCases(t) {
		specPath := inv.Specs[0]
		data, err := os.ReadFile(filepath.Join(inv.Dir, specPath))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := generate(t, inv)
		for i := range 3 {
			g, diags := spec.Decode(specPath, shuffled(t, data, r))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got, diags, err := inv.GenerateGraph(g, specPath)
			if err != nil {
				t.Fatal(err)
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, shuffle %d: output depends on key order:\n%s", name, i, diff)
			}
		}
	}
}
