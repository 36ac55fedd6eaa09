package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Compare checks observations against a case and returns one readable line
// per difference (none when the case passed). A multi-run case names the
// run that differed.
func Compare(c *Case, got []Observation) []string {
	runs := c.plan()
	var diffs []string
	if len(got) == 1 && got[0].Status == "invalid" && len(runs) > 0 && runs[0].Expect.Status != "invalid" {
		return []string{fmt.Sprintf("the graph was refused, but the case expects it to run (%s: %s)", got[0].ErrorKind, got[0].Error)}
	}
	for i, r := range runs {
		where := ""
		if c.Multi() {
			where = fmt.Sprintf("runs[%d] (%s): ", i, describeRun(r))
		}
		if i >= len(got) {
			diffs = append(diffs, where+"did not run")
			continue
		}
		for _, d := range compareRun(r.Expect, got[i]) {
			diffs = append(diffs, where+d)
		}
		if r.Expect.Status == "invalid" {
			break
		}
	}
	return diffs
}

func describeRun(r Run) string {
	switch {
	case r.Input != nil:
		return "input " + compact(r.Input)
	case r.ResumeKeyed != nil:
		b, _ := json.Marshal(r.ResumeKeyed)
		return "resume_keyed " + string(b)
	}
	return "resume " + compact(r.Resume)
}

func compareRun(want Expect, got Observation) []string {
	var d []string
	if want.Status != got.Status {
		msg := fmt.Sprintf("status: want %s, got %s", want.Status, got.Status)
		if got.Error != "" {
			msg += fmt.Sprintf(" (%s error: %s)", got.ErrorKind, got.Error)
		}
		return append(d, msg)
	}
	if want.ErrorKind != "" && want.ErrorKind != got.ErrorKind {
		d = append(d, fmt.Sprintf("error_kind: want %s, got %s (%s)", want.ErrorKind, got.ErrorKind, got.Error))
	}
	if want.Status == "invalid" {
		return d
	}
	if !reflect.DeepEqual(norm(want.Steps), norm(got.Steps)) {
		d = append(d, fmt.Sprintf("steps:\n\twant %s\n\tgot  %s", js(want.Steps), js(got.Steps)))
	}
	if want.State != nil && want.Status == "done" && !jsonEqual(want.State, got.State) {
		msg := fmt.Sprintf("state:\n\twant %s\n\tgot  %s", compact(want.State), compact(got.State))
		for _, line := range stateDiff(want.State, got.State) {
			msg += "\n" + line
		}
		d = append(d, msg)
	}
	if want.Status == "interrupted" {
		if !jsonEqual(mustJSON(want.Pending), mustJSON(got.Pending)) {
			d = append(d, fmt.Sprintf("pending:\n\twant %s\n\tgot  %s", js(want.Pending), js(got.Pending)))
		}
	}
	if want.Effects != nil && !reflect.DeepEqual(nonEmpty(want.Effects), nonEmpty(got.Effects)) {
		d = append(d, fmt.Sprintf("effects (step functions really executed):\n\twant %s\n\tgot  %s", js(want.Effects), js(got.Effects)))
	}
	return d
}

// stateDiff lists the channels whose values differ.
func stateDiff(want, got json.RawMessage) []string {
	var w, g map[string]any
	if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil {
		return nil
	}
	var out []string
	for _, k := range sortedKeys(w, g) {
		wv, wok := w[k]
		gv, gok := g[k]
		switch {
		case !gok:
			out = append(out, fmt.Sprintf("\tchannel %q: want %s, got unset", k, js(wv)))
		case !wok:
			out = append(out, fmt.Sprintf("\tchannel %q: want unset, got %s", k, js(gv)))
		case !reflect.DeepEqual(wv, gv):
			out = append(out, fmt.Sprintf("\tchannel %q: want %s, got %s", k, js(wv), js(gv)))
		}
	}
	return out
}

func sortedKeys(ms ...map[string]any) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

func norm(steps [][]string) [][]string {
	if steps == nil {
		return [][]string{}
	}
	return steps
}

func nonEmpty(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

// jsonEqual compares two JSON texts as values, numbers as doubles.
func jsonEqual(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func compact(raw json.RawMessage) string {
	if raw == nil {
		return "(none)"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return strings.TrimSpace(string(raw))
	}
	return js(v)
}
