package runtime_test

import (
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// TestLoadRefusesConfigNumbersBeyondFloat64: runtime.Load refuses a config
// number that ilmekgen check and gen refuse (the decoder's one rule), where
// it used to accept it and hand the node +Inf.
func TestLoadRefusesConfigNumbersBeyondFloat64(t *testing.T) {
	reg := runtime.Registry{"t": func(spec.Node) (runtime.NodeFunc, error) {
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }, nil
	}}
	for _, num := range []string{"1e999999999", "-1e400", strings.Repeat("9", 5_000_000)} {
		doc := `{"channels": {"x": {}}, "nodes": [{"id": "a", "type": "t", "config": {"n": [` + num + `]}}],
"edges": [{"from": "__start__", "to": "a"}, {"from": "a", "to": "__end__"}]}`
		_, err := runtime.Load("doc.json", []byte(doc), reg)
		if err == nil || !strings.Contains(err.Error(), "nodes[0].config.n[0]: ") || !strings.Contains(err.Error(), "does not fit float64") {
			t.Errorf("%.20s: %.300v; want the decoder's refusal", num, err)
		}
	}
}
