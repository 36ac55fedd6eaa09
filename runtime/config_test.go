package runtime_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

type approvalConfig struct {
	Approver string   `json:"approver"`
	Limit    int32    `json:"limit"`
	Rate     float64  `json:"rate"`
	Tags     []string `json:"tags"`
	Extra    any      `json:"extra"`
}

// TestDecodeConfigStrict: runtime.DecodeConfig refuses what ilmekgen
// refuses for a bound config type, with ilmekgen's words (see
// gen/bound.go and gen/config.go): unknown keys, wrong kinds, numbers out
// of range; an untyped (any) value refuses numbers beyond float64 and
// integers beyond int64, as the generator's inferred types do.
func TestDecodeConfigStrict(t *testing.T) {
	const typ = "github.com/ilmek-go/ilmek/runtime_test.approvalConfig"
	for _, tc := range []struct {
		config string
		want   string // "" decodes
	}{
		{`{"approver": "ann", "limit": 5, "rate": 0.5, "tags": ["a"], "extra": {"n": 1}}`, ""},
		{`{"Approver": "ann"}`, ""}, // case-insensitive, as encoding/json
		{`{"approverz": "ann"}`, `config.approverz: key "approverz" is not a field of ` + typ + ` (its keys: "approver", "limit", "rate", "tags", "extra")`},
		{`{"approver": 3}`, `config.approver: want a string for string, got a number`},
		{`{"tags": "a"}`, `config.tags: want an array for []string, got a string`},
		{`{"limit": 2147483648}`, `config.limit: 2147483648 does not fit int32: encoding/json wants an integer in its range`},
		{`{"rate": 1e400}`, `config.rate: 1e400 does not fit float64`},
		{`{"extra": 1e400}`, `config.extra: 1e400 does not fit float64`},
		{`{"extra": [9223372036854775808]}`, `config.extra[0]: 9223372036854775808 does not fit int64: encoding/json wants an integer in its range`},
	} {
		var cfg approvalConfig
		err := runtime.DecodeConfig(spec.Node{ID: "approve", Type: "human_approval", Config: json.RawMessage(tc.config)}, &cfg)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.config, err)
			}
			continue
		}
		var ce *runtime.ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: err = %T %v, want a *runtime.ConfigError", tc.config, err, err)
			continue
		}
		want := `config of node "approve" (type "human_approval"): ` + tc.want + "; fix the stored config or the Go type " + typ
		if err.Error() != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.config, err, want)
		}
	}
	var m map[string]any
	if err := runtime.DecodeConfig(spec.Node{ID: "a", Type: "t", Config: json.RawMessage(`{"x": 1e400}`)}, &m); err == nil || !strings.Contains(err.Error(), "1e400 does not fit float64") {
		t.Errorf("map[string]any: err = %v", err)
	}
}
