package conformance

import (
	"encoding/json"
	"strings"
	"testing"
)

// multiRunCase is a case file with the given extension and runs, on a spec
// with one node, and one child document "k".
func multiRunCase(ext, runs string) string {
	return `{"extension": "` + ext + `", "spec": {"name": "p", "channels": {}, "nodes": [{"id": "a", "type": "noop"}], "edges": [{"from": "__start__", "to": "a"}, {"from": "a", "to": "__end__"}]},
	"subgraphs": {"k": {"name": "k"}}, "runs": ` + runs + `}`
}

// TestParseCaseMultiRunFields checks the runs' fork_from_run, kill and
// subgraphs: accepted with the extension, refused (naming the run and
// the fix) without it or when they cannot mean anything.
func TestParseCaseMultiRunFields(t *testing.T) {
	const both = ExtensionSubgraphs + "," + ExtensionMultiRun
	done := `"expect": {"status": "done", "steps": []}`
	killed := `"expect": {"status": "killed", "steps": []}`
	for _, tc := range []struct {
		name, ext, runs string
		wantErr         string // "" accepts
		phases          int
	}{
		{"fork", both, `[{"input": {}, ` + done + `}, {"fork_from_run": 0, "input": {}, ` + done + `}]`, "", 1},
		{"kill then continue", both, `[{"input": {}, "kill": "x", ` + killed + `}, {"input": {}, ` + done + `}]`, "", 1},
		{"changed child", both, `[{"input": {}, ` + done + `}, {"subgraphs": {"k": {"name": "k"}}, "input": {}, ` + done + `}]`, "", 2},
		{"without the extension", ExtensionSubgraphs, `[{"input": {}, ` + done + `}, {"fork_from_run": 0, "input": {}, ` + done + `}]`, `must say "extension": "ilmek-go/multirun"`, 0},
		{"fork from a later run", both, `[{"fork_from_run": 1, "input": {}, ` + done + `}, {"input": {}, ` + done + `}]`, "runs[0]: fork_from_run 1 must name an earlier run", 0},
		{"fork across a changed child", both, `[{"input": {}, ` + done + `}, {"subgraphs": {"k": {"name": "k"}}, "fork_from_run": 0, "input": {}, ` + done + `}]`, "of the same program", 0},
		{"kill expecting done", both, `[{"input": {}, "kill": "x", ` + done + `}, {"input": {}, ` + done + `}]`, `expects status "killed"`, 0},
		{"kill as the last run", both, `[{"input": {}, ` + done + `}, {"input": {}, "kill": "x", ` + killed + `}]`, "must be followed by the run that continues", 0},
		{"unknown child", both, `[{"input": {}, ` + done + `}, {"subgraphs": {"nope": {}}, "input": {}, ` + done + `}]`, "subgraphs.nope replaces no child document", 0},
		{"child changed by the first run", both, `[{"subgraphs": {"k": {}}, "input": {}, ` + done + `}]`, `runs[0]: "subgraphs" changes`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseCase("x.json", []byte(multiRunCase(tc.ext, tc.runs)))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Phases(); got != tc.phases {
				t.Errorf("Phases() = %d, want %d", got, tc.phases)
			}
		})
	}
}

// TestAtPhase checks that each phase sees the child documents changed up
// to it, and that the case itself is not changed.
func TestAtPhase(t *testing.T) {
	done := `"expect": {"status": "done", "steps": []}`
	c, err := ParseCase("x.json", []byte(multiRunCase(ExtensionSubgraphs+", "+ExtensionMultiRun,
		`[{"input": {}, `+done+`}, {"subgraphs": {"k": {"name": "k", "v": 2}}, "input": {}, `+done+`}, {"input": {}, `+done+`}, {"subgraphs": {"k": {"name": "k", "v": 3}}, "input": {}, `+done+`}]`)))
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range []string{`{"name": "k"}`, `{"name": "k", "v": 2}`, `{"name": "k", "v": 3}`} {
		if got := string(c.AtPhase(p).Subgraphs["k"]); got != want {
			t.Errorf("phase %d: child k = %s, want %s", p, got, want)
		}
	}
	if got := string(c.Subgraphs["k"]); got != `{"name": "k"}` {
		t.Errorf("the case's own child changed to %s", got)
	}
	for i, want := range []int{0, 1, 1, 2} {
		if got := c.phaseOf(i); got != want {
			t.Errorf("phaseOf(%d) = %d, want %d", i, got, want)
		}
	}
	if k0, k1 := phaseKeys(c)[0], phaseKeys(c)[1]; k0 == k1 {
		t.Error("two phases with different children share a generated package key")
	}
}

// TestWorkersSkip checks which cases the workers backend skips, and why.
func TestWorkersSkip(t *testing.T) {
	ask := func(n int) string {
		pend := make([]string, n)
		for i := range pend {
			pend[i] = `{"id": "x` + string(rune('0'+i)) + `", "key": "k", "node": "a", "payload": null}`
		}
		return `"expect": {"status": "interrupted", "steps": [], "pending": [` + strings.Join(pend, ",") + `]}`
	}
	done := `"expect": {"status": "done", "steps": []}`
	for _, tc := range []struct {
		name, runs, want string // want: "" runs, else a part of the reason
	}{
		{"bare answer to one open interrupt", `[{"input": {}, ` + ask(1) + `}, {"resume": 1, ` + done + `}]`, ""},
		{"keyed answers", `[{"input": {}, ` + ask(2) + `}, {"resume_keyed": {"x0": 1, "x1": 2}, ` + done + `}]`, ""},
		{"bare answer to two", `[{"input": {}, ` + ask(2) + `}, {"resume": 1, ` + done + `}]`, "runs[1] is a bare resume of a thread with 2 open interrupts"},
		{"bare answer after an error", `[{"input": {}, ` + ask(1) + `}, {"resume": 1, "expect": {"status": "error", "steps": []}}, {"resume": 1, ` + done + `}]`, "runs[2] is a bare resume of a thread with 0 open"},
		{"bare answer to a fork", `[{"input": {}, ` + ask(1) + `}, {"resume": 1, ` + done + `}, {"fork_from_run": 0, "resume": 2, ` + done + `}]`, ""},
		{"killed run", `[{"input": {}, "kill": "x", "expect": {"status": "killed", "steps": []}}, {"input": {}, ` + done + `}]`, "runs[0] kills its process"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseCase("x.json", []byte(multiRunCase(ExtensionSubgraphs+","+ExtensionMultiRun, tc.runs)))
			if err != nil {
				t.Fatal(err)
			}
			got := WorkersSkip(c)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("WorkersSkip = %q, want %q", got, tc.want)
			}
		})
	}
	if got := memorySkip(&Case{Runs: []Run{{Kill: "x"}}}); got == "" {
		t.Error("the memory backend runs a killed run")
	}
}

// TestEffectsLedger checks that the counts a killed process wrote to its
// ledger are added to the case's counter.
func TestEffectsLedger(t *testing.T) {
	path := t.TempDir() + "/ledger"
	child, err := ledgerEffects(path)
	if err != nil {
		t.Fatal(err)
	}
	child.Count("a")
	child.Count("b")
	child.Count("a")
	child.ledger.Close()
	fx := NewEffects()
	fx.Count("a")
	if err := fx.addLedger(path); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(fx.Snapshot())
	if string(got) != `{"a":3,"b":1}` {
		t.Errorf("effects %s, want a 3 and b 1", got)
	}
	if err := fx.addLedger(path + ".none"); err != nil {
		t.Errorf("an absent ledger (nothing counted): %v", err)
	}
}
