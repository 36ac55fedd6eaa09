package conformance

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ExtensionMultiRun is the "extension" of a case file whose runs use
// fork_from_run, kill or subgraphs (Run.ForkFromRun, Run.Kill,
// Run.Subgraphs): this project's extension of ilmek/1's multi-run format,
// for what happens to a thread between its runs (a fork, a killed
// process, a changed child document). A case names it beside
// ExtensionSubgraphs, separated by a comma.
const ExtensionMultiRun = "ilmek-go/multirun"

// StatusKilled is the status of a run whose process was killed with
// SIGKILL (Run.Kill); its steps are not observed.
const StatusKilled = "killed"

// Extends reports whether the case names extension ext.
func (c *Case) Extends(ext string) bool {
	for e := range strings.SplitSeq(c.Extension, ",") {
		if strings.TrimSpace(e) == ext {
			return true
		}
	}
	return false
}

// checkMultiRun checks the runs' fork_from_run, kill and subgraphs.
func (c *Case) checkMultiRun() error {
	for i, r := range c.Runs {
		used := r.ForkFromRun != nil || r.Kill != "" || r.Subgraphs != nil
		switch {
		case !used:
			continue
		case !c.Extends(ExtensionMultiRun):
			return fmt.Errorf("runs[%d] uses fork_from_run, kill or subgraphs: the case must say \"extension\": %q", i, ExtensionMultiRun)
		case r.ForkFromRun != nil && (*r.ForkFromRun < 0 || *r.ForkFromRun >= i || c.phaseOf(*r.ForkFromRun) != c.phaseOf(i)):
			return fmt.Errorf("runs[%d]: fork_from_run %d must name an earlier run of the same program (no subgraphs change between them)", i, *r.ForkFromRun)
		case r.Kill != "" && r.Expect.Status != StatusKilled:
			return fmt.Errorf("runs[%d]: a run with \"kill\" expects status %q", i, StatusKilled)
		case r.Kill != "" && r.ForkFromRun != nil:
			return fmt.Errorf("runs[%d]: a killed run cannot also fork", i)
		case r.Kill != "" && i == len(c.Runs)-1:
			return fmt.Errorf("runs[%d]: a killed run must be followed by the run that continues the thread", i)
		case r.Subgraphs != nil && i == 0:
			return fmt.Errorf("runs[0]: \"subgraphs\" changes the child documents of later runs; put the first ones in the case's \"subgraphs\"")
		}
		for name := range r.Subgraphs {
			if _, ok := c.Subgraphs[name]; !ok {
				return fmt.Errorf("runs[%d]: subgraphs.%s replaces no child document of the case", i, name)
			}
		}
	}
	return nil
}

// phaseOf returns the phase of runs[i]: how many runs up to it changed the
// child documents. Each phase is one program.
func (c *Case) phaseOf(i int) int {
	p := 0
	for _, r := range c.Runs[:i+1] {
		if r.Subgraphs != nil {
			p++
		}
	}
	return p
}

// Phases returns how many programs the case needs: one, plus one per run
// that changes the child documents.
func (c *Case) Phases() int {
	if !c.Multi() {
		return 1
	}
	return c.phaseOf(len(c.Runs)-1) + 1
}

// AtPhase returns c as the program of phase p sees it: its Subgraphs are
// the child documents of that phase, and Drive makes only the runs of that
// phase.
func (c *Case) AtPhase(p int) *Case {
	if p == 0 && c.phase == 0 {
		return c
	}
	cp := *c
	cp.phase = p
	cp.Subgraphs = maps.Clone(c.Subgraphs)
	for i, r := range c.Runs {
		if c.phaseOf(i) > p {
			break
		}
		maps.Copy(cp.Subgraphs, r.Subgraphs)
	}
	return &cp
}

// phaseKeys returns the generated kind's key (caseKey) of each phase's
// program.
func phaseKeys(c *Case) []string {
	keys := make([]string, c.Phases())
	for p := range keys {
		keys[p] = caseKey(c.AtPhase(p))
	}
	return keys
}

// hasKill reports whether a run of c is killed (Run.Kill).
func (c *Case) hasKill() bool {
	return slices.ContainsFunc(c.Runs, func(r Run) bool { return r.Kill != "" })
}
