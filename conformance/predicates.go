package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// TruthTable is the predicate truth table: a probe graph and rows of a
// predicate, a channel value and whether the edge is taken.
type TruthTable struct {
	Probe json.RawMessage `json:"probe"`
	Rows  []TruthRow      `json:"rows"`
}

// TruthRow is one row of the truth table.
type TruthRow struct {
	When json.RawMessage `json:"when"`
	// Value is the channel's value; absent means the channel is never
	// written.
	Value json.RawMessage `json:"value,omitempty"`
	// Expect is true, false or "invalid" (the document must be refused).
	Expect json.RawMessage `json:"expect"`
	Why    string          `json:"why,omitempty"`
}

// LoadTruthTable reads a truth table file.
func LoadTruthTable(path string) (*TruthTable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t TruthTable
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("%s: not a truth table: %w", path, err)
	}
	return &t, nil
}

// Cases turns every row into a single-run case on the probe graph: the
// row's predicate guards probe → hit, the input writes v (unless the row
// leaves it unset), and the case expects hit to run, not run, or the
// document to be refused.
func (t *TruthTable) Cases(file string) ([]*Case, error) {
	var out []*Case
	for i, r := range t.Rows {
		probe := bytes.Replace(t.Probe, []byte(`"<row.when>"`), r.When, 1)
		c := &Case{File: fmt.Sprintf("%s#rows[%d]", file, i), Name: fmt.Sprintf("row %d: when %s value %s", i, compact(r.When), valueText(r.Value)), Spec: probe}
		if r.Value != nil {
			c.Input = json.RawMessage(`{"v":` + string(r.Value) + `}`)
		}
		exp := &Expect{Status: "done"}
		switch string(r.Expect) {
		case "true":
			exp.Steps = [][]string{{"probe"}, {"hit"}}
		case "false":
			exp.Steps = [][]string{{"probe"}}
		case `"invalid"`:
			exp.Status, exp.ErrorKind = "invalid", "spec"
		default:
			return nil, fmt.Errorf("%s: row %d: expect must be true, false or \"invalid\", got %s", file, i, r.Expect)
		}
		c.Expect = exp
		out = append(out, c)
	}
	return out, nil
}

func valueText(v json.RawMessage) string {
	if v == nil {
		return "unset"
	}
	return compact(v)
}
