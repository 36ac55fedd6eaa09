// Package conformance runs the ilmek/1 scenario suite: case files (a spec,
// inputs and what must happen) executed through every kind of program and
// compared with what the case expects. The case-file format and the test
// registry are described in README.md beside this file.
//
// A Kind runs cases: SpecKind builds each graph with runtime.FromSpec and
// the test Registry; GeneratedKind compiles every spec with ilmekgen into
// one temporary module and runs the cases in its program. Both drive every
// run of a case with Drive and report Observations, which Compare checks
// against the case; RunSuite does all of that for the ilmek-conformance
// command.
//
// A Backend is where a case's thread lives (OpenBackend: memory, sqlite,
// postgres, and workers, whose runs Drive submits as requests to a
// runtime/postgres/workers queue drained in process); Backend.Skip names
// the cases a backend cannot express. Cases of ExtensionMultiRun fork a
// thread, kill the process making a run (ServeHelper makes it in a process
// of its own) or change a child document between runs.
package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Case is one case file: a single-run case (Input and Expect) or a
// multi-run case (Runs), both on one spec.
type Case struct {
	// File is where the case was read from.
	File  string          `json:"-"`
	Name  string          `json:"name"`
	About string          `json:"about"`
	Spec  json.RawMessage `json:"spec"`
	// Input is the single-run input (absent means none).
	Input          json.RawMessage `json:"input,omitempty"`
	RecursionLimit *int            `json:"recursion_limit,omitempty"`
	Expect         *Expect         `json:"expect,omitempty"`
	Runs           []Run           `json:"runs,omitempty"`
	// Divergence says why this project deliberately differs from the
	// reference implementation on this case.
	Divergence string `json:"divergence,omitempty"`
	// Extension names the extension of ilmek/1 the case needs
	// (ExtensionSubgraphs), "" for a case of ilmek/1 itself. A case that
	// also uses the runs' fork_from_run, kill or subgraphs names both,
	// separated by a comma ("ilmek-go/subgraphs,ilmek-go/multirun").
	Extension string `json:"extension,omitempty"`
	// Subgraphs are the child documents the spec's "subgraph" nodes name,
	// by name (ExtensionSubgraphs).
	Subgraphs map[string]json.RawMessage `json:"subgraphs,omitempty"`

	// phase is the program Drive makes the runs of (AtPhase).
	phase int
}

// Run is one run of a multi-run case: exactly one of Input, Resume or
// ResumeKeyed.
type Run struct {
	Input       json.RawMessage            `json:"input,omitempty"`
	Resume      json.RawMessage            `json:"resume,omitempty"`
	ResumeKeyed map[string]json.RawMessage `json:"resume_keyed,omitempty"`
	// ForkFromRun, when set, starts this run from the checkpoint that was
	// the thread's latest when runs[ForkFromRun] (an earlier run of the
	// same phase) ended, as runtime.Thread.Fork does: a branch of the
	// thread, which becomes its latest (ExtensionMultiRun).
	ForkFromRun *int `json:"fork_from_run,omitempty"`
	// Kill names a "kill" script op: this run is made by a process of its
	// own in which that op sends SIGKILL to its own process; the run is
	// expected to end with status "killed", and the next run continues the
	// thread in this process (ExtensionMultiRun).
	Kill string `json:"kill,omitempty"`
	// Subgraphs replaces child documents (by name) from this run on: the
	// program is built again with them, on the same thread
	// (ExtensionSubgraphs with ExtensionMultiRun).
	Subgraphs  map[string]json.RawMessage `json:"subgraphs,omitempty"`
	Expect     Expect                     `json:"expect"`
	Divergence string                     `json:"divergence,omitempty"`
}

// Expect is what a run must do.
type Expect struct {
	// Status is done, interrupted, error, refused or (single-run only)
	// invalid.
	Status     string          `json:"status"`
	ErrorKind  string          `json:"error_kind,omitempty"`
	ErrorMatch string          `json:"error_match,omitempty"`
	Steps      [][]string      `json:"steps"`
	State      json.RawMessage `json:"state,omitempty"`
	Pending    []Pending       `json:"pending,omitempty"`
	Effects    map[string]int  `json:"effects,omitempty"`
}

// Pending is an open interrupt as a case lists it.
type Pending struct {
	ID      string          `json:"id"`
	Key     string          `json:"key"`
	Node    string          `json:"node"`
	Payload json.RawMessage `json:"payload"`
}

// Multi reports whether c is a multi-run case.
func (c *Case) Multi() bool { return len(c.Runs) > 0 }

// Limit is the case's recursion limit (25 when absent).
func (c *Case) Limit() int {
	if c.RecursionLimit == nil {
		return 25
	}
	return *c.RecursionLimit
}

// plan returns the runs of c: a single-run case is one plain run.
func (c *Case) plan() []Run {
	if c.Multi() {
		return c.Runs
	}
	in := c.Input
	if in == nil {
		in = json.RawMessage("{}")
	}
	return []Run{{Input: in, Expect: *c.Expect}}
}

// ParseCase decodes one case file.
func ParseCase(file string, data []byte) (*Case, error) {
	var c Case
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: not a case file: %w", file, err)
	}
	c.File = file
	if c.Name == "" {
		c.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	switch {
	case len(c.Spec) == 0:
		return nil, fmt.Errorf("%s: case has no \"spec\"", file)
	case c.Multi() && c.Expect != nil:
		return nil, fmt.Errorf("%s: a case has either \"runs\" or \"expect\", not both", file)
	case !c.Multi() && c.Expect == nil:
		return nil, fmt.Errorf("%s: case has neither \"expect\" nor \"runs\"", file)
	case len(c.Subgraphs) > 0 && !c.Extends(ExtensionSubgraphs):
		return nil, fmt.Errorf("%s: a case with \"subgraphs\" must say \"extension\": %q", file, ExtensionSubgraphs)
	}
	if err := c.checkMultiRun(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for i, r := range c.Runs {
		n := 0
		if r.Input != nil {
			n++
		}
		if r.Resume != nil {
			n++
		}
		if r.ResumeKeyed != nil {
			n++
		}
		if n != 1 {
			return nil, fmt.Errorf("%s: runs[%d] must have exactly one of \"input\", \"resume\", \"resume_keyed\"", file, i)
		}
	}
	return &c, nil
}

// LoadDir reads every *.json case file of dir (not recursively), sorted by
// file name. Files that are not case files (no "spec") are an error. A
// folder of the reference's tool, agent or skill data (UpstreamFamily)
// holds no case files: LoadUpstreamDir reads it.
func LoadDir(dir string) ([]*Case, error) {
	if UpstreamFamily(dir) != "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") && !IsVizCase(filepath.Join(dir, e.Name())) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	var cases []*Case
	for _, n := range names {
		path := filepath.Join(dir, n)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		c, err := ParseCase(path, data)
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	return cases, nil
}
