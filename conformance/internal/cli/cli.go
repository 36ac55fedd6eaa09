// Package cli is the ilmek-conformance command: flags, loading, exit codes.
package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ilmek-go/ilmek/conformance"
	"github.com/ilmek-go/ilmek/runtime"
)

// Kinds are the program kinds the command knows, by name.
var Kinds = map[string]conformance.Kind{
	"spec": conformance.SpecKind{},
}

// Backends are the checkpointers the command knows, by name.
var Backends = map[string]func() runtime.Checkpointer{
	"memory": func() runtime.Checkpointer { return runtime.NewMemory() },
}

// Main runs the command and returns its exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("ilmek-conformance", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	kinds := fs.StringSlice("kinds", []string{"spec"}, "program kinds to run: "+strings.Join(sortedKeys(Kinds), ", "))
	backends := fs.StringSlice("backends", []string{"memory"}, "checkpointers to run against: "+strings.Join(sortedKeys(Backends), ", "))
	predicates := fs.String("predicates", "", "a predicate truth table (predicates.json) to run as cases too")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: ilmek-conformance [flags] DIR...\n\nRuns every case file (*.json) of each DIR through each program kind.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 && *predicates == "" {
		fs.Usage()
		return 2
	}
	var ks []conformance.Kind
	for _, k := range *kinds {
		kind, ok := Kinds[k]
		if !ok {
			fmt.Fprintf(stderr, "ilmek-conformance: unknown kind %q (known: %s)\n", k, strings.Join(sortedKeys(Kinds), ", "))
			return 2
		}
		ks = append(ks, kind)
	}
	var bs []conformance.Backend
	for _, b := range *backends {
		f, ok := Backends[b]
		if !ok {
			fmt.Fprintf(stderr, "ilmek-conformance: unknown backend %q (known: %s)\n", b, strings.Join(sortedKeys(Backends), ", "))
			return 2
		}
		bs = append(bs, conformance.Backend{Name: b, New: f})
	}
	var cases []*conformance.Case
	for _, dir := range fs.Args() {
		cs, err := conformance.LoadDir(dir)
		if err != nil {
			fmt.Fprintf(stderr, "ilmek-conformance: %v\n", err)
			return 2
		}
		cases = append(cases, cs...)
	}
	if *predicates != "" {
		t, err := conformance.LoadTruthTable(*predicates)
		if err == nil {
			var cs []*conformance.Case
			cs, err = t.Cases(*predicates)
			cases = append(cases, cs...)
		}
		if err != nil {
			fmt.Fprintf(stderr, "ilmek-conformance: %v\n", err)
			return 2
		}
	}
	rep, err := conformance.RunSuite(context.Background(), stdout, cases, ks, bs)
	if err != nil {
		fmt.Fprintf(stderr, "ilmek-conformance: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", rep.Passed, rep.Failed)
	if rep.Failed > 0 {
		return 1
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
