package runtime_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// level is a named integer type of a config field.
type level int8

// TestConfigProblemParts: each problem of a *runtime.ConfigError says what
// is wrong in parts (Kind, GoType, Want, Got, Key, Keys, Min, Max), so a
// tool can word it without parsing Msg; named types included, whose Msg
// names the type and not the integer it is made of.
func TestConfigProblemParts(t *testing.T) {
	type cfg struct {
		Name  string `json:"name"`
		Level level  `json:"level"`
		Rate  float32
	}
	const typ = "github.com/ilmek-go/ilmek/runtime_test.cfg"
	const lvl = "github.com/ilmek-go/ilmek/runtime_test.level"
	for _, tc := range []struct {
		config string
		want   runtime.ConfigProblem // Msg not compared
	}{
		{`{"name": 3}`, runtime.ConfigProblem{Path: "config.name", Kind: runtime.ConfigWrongKind, GoType: "string", Want: "a string", Got: "a number"}},
		{`{"level": "high"}`, runtime.ConfigProblem{Path: "config.level", Kind: runtime.ConfigWrongKind, GoType: lvl, Want: "a number", Got: "a string", Min: "-128", Max: "127"}},
		{`{"level": 300}`, runtime.ConfigProblem{Path: "config.level", Kind: runtime.ConfigOutOfRange, GoType: lvl, Got: "300", Min: "-128", Max: "127"}},
		{`{"Rate": 1e39}`, runtime.ConfigProblem{Path: "config.Rate", Kind: runtime.ConfigOutOfRange, GoType: "float32", Got: "1e39"}},
		{`{"nme": "x"}`, runtime.ConfigProblem{Path: "config.nme", Kind: runtime.ConfigUnknownKey, GoType: typ, Key: "nme", Keys: []string{"name", "level", "Rate"}}},
		{`[1]`, runtime.ConfigProblem{Path: "config", Kind: runtime.ConfigWrongKind, GoType: typ, Want: "an object", Got: "an array"}},
	} {
		var c cfg
		err := runtime.DecodeConfig(spec.Node{ID: "n", Type: "t", Config: json.RawMessage(tc.config)}, &c)
		var ce *runtime.ConfigError
		if !errors.As(err, &ce) || len(ce.Problems) != 1 {
			t.Errorf("%s: err = %v, want a *runtime.ConfigError with one problem", tc.config, err)
			continue
		}
		got := ce.Problems[0]
		if got.Msg == "" {
			t.Errorf("%s: no Msg", tc.config)
		}
		got.Msg = ""
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.config, d)
		}
	}
}
