// Package cli is the ilmek-conformance command: flags, loading, exit codes.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ilmek-go/ilmek/conformance"
)

// kindOptions are the flags that configure a program kind.
type kindOptions struct {
	// module is --module: the source of github.com/ilmek-go/ilmek (empty:
	// found from the command's source or the current directory).
	module string
	// keep is --keep: leave the generated kind's temporary module on disk.
	keep bool
}

// Kinds are the program kinds the command knows, by name; each run of the
// command makes its own (the generated kind holds a temporary module).
var Kinds = map[string]func(kindOptions) conformance.Kind{
	"spec": func(kindOptions) conformance.Kind { return conformance.SpecKind{} },
	"code": func(kindOptions) conformance.Kind { return conformance.CodeKind{} },
	"generated": func(o kindOptions) conformance.Kind {
		return &conformance.GeneratedKind{ModuleRoot: o.module, Keep: o.keep}
	},
}

// defaultKinds are the kinds run without --kinds.
var defaultKinds = []string{"spec", "code", "generated"}

// Main runs the command and returns its exit status: 0 when every case
// passed, 1 when one failed or the suite could not run, 2 on usage errors.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("ilmek-conformance", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	kinds := fs.StringSlice("kinds", defaultKinds, "program kinds to run: "+strings.Join(sortedKeys(Kinds), ", "))
	backends := fs.StringSlice("backends", conformance.BackendNames, "checkpointers to run against: "+strings.Join(conformance.BackendNames, ", "))
	predicates := fs.String("predicates", "", "a predicate truth table (predicates.json) to run as cases too")
	var ko kindOptions
	fs.StringVar(&ko.module, "module", "", "source directory of github.com/ilmek-go/ilmek, for the generated kind (default: found from the command's source or the current directory)")
	fs.BoolVar(&ko.keep, "keep", false, "keep the generated kind's temporary module (its directory is printed on stderr)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: ilmek-conformance [flags] DIR...\n\nRuns every case file (*.json, single-run or multi-run) of each DIR through\neach program kind against each checkpointer, and every diagram case (a\n*.json with a *.mmd beside it, MODEL.md §9.1) through each kind that draws\nit, and every folder of the reference's MCP, A2A and skills data (an\nexpected.json beside a server.json, an agent.json or skill folders; DIR\nmay hold such folders) once, and prints one line per case, kind and\ncheckpointer, then \"N passed, N failed\" (and \", N skipped\" when a backend skipped a case\nit cannot express, each with its reason).\n\n")
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
	for _, name := range *kinds {
		newKind, ok := Kinds[name]
		if !ok {
			fmt.Fprintf(stderr, "ilmek-conformance: unknown kind %q (known: %s)\n", name, strings.Join(sortedKeys(Kinds), ", "))
			return 2
		}
		ks = append(ks, newKind(ko))
	}
	var bs []conformance.Backend
	for _, name := range *backends {
		b, err := conformance.OpenBackend(name)
		if err != nil {
			fmt.Fprintf(stderr, "ilmek-conformance: --backends: %v\n", err)
			return 2
		}
		defer b.Close()
		bs = append(bs, b)
	}
	defer closeKinds(ks, stderr)
	cases, err := loadCases(fs.Args(), *predicates)
	if err != nil {
		fmt.Fprintf(stderr, "ilmek-conformance: %v\n", err)
		return 2
	}
	var viz []*conformance.VizCase
	for _, dir := range fs.Args() {
		vs, err := conformance.LoadVizDir(dir)
		if err != nil {
			fmt.Fprintf(stderr, "ilmek-conformance: %v\n", err)
			return 2
		}
		viz = append(viz, vs...)
	}
	var upstream []*conformance.UpstreamCase
	for _, dir := range fs.Args() {
		us, err := conformance.LoadUpstreamDir(dir)
		if err != nil {
			fmt.Fprintf(stderr, "ilmek-conformance: %v\n", err)
			return 2
		}
		upstream = append(upstream, us...)
	}
	// An interrupt stops the build or the generated program, and the
	// deferred closes remove the temporary files.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var rep conformance.Report
	if len(cases) > 0 {
		rep, err = conformance.RunSuite(ctx, stdout, cases, ks, bs)
		if err != nil {
			fmt.Fprintf(stderr, "ilmek-conformance: %v\n", err)
			return 1
		}
	}
	vr := conformance.RunViz(stdout, viz, *kinds)
	rep.Passed += vr.Passed
	rep.Failed += vr.Failed
	ur := conformance.RunUpstream(ctx, stdout, upstream)
	rep.Passed += ur.Passed
	rep.Failed += ur.Failed
	if rep.Skipped > 0 {
		fmt.Fprintf(stdout, "%d passed, %d failed, %d skipped\n", rep.Passed, rep.Failed, rep.Skipped)
	} else {
		fmt.Fprintf(stdout, "%d passed, %d failed\n", rep.Passed, rep.Failed)
	}
	if rep.Failed > 0 {
		return 1
	}
	return 0
}

// loadCases reads every case file of dirs and, when predicates is set, the
// rows of that truth table.
func loadCases(dirs []string, predicates string) ([]*conformance.Case, error) {
	var cases []*conformance.Case
	for _, dir := range dirs {
		cs, err := conformance.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		cases = append(cases, cs...)
	}
	if predicates != "" {
		t, err := conformance.LoadTruthTable(predicates)
		if err != nil {
			return nil, err
		}
		cs, err := t.Cases(predicates)
		if err != nil {
			return nil, err
		}
		cases = append(cases, cs...)
	}
	return cases, nil
}

// closeKinds releases what the kinds hold, saying where a kept temporary
// module is.
func closeKinds(ks []conformance.Kind, stderr io.Writer) {
	for _, k := range ks {
		g, ok := k.(*conformance.GeneratedKind)
		if !ok {
			continue
		}
		if g.Keep && g.Dir() != "" {
			fmt.Fprintf(stderr, "ilmek-conformance: kept the generated kind's module in %s\n", g.Dir())
		}
		if err := g.Close(); err != nil {
			fmt.Fprintf(stderr, "ilmek-conformance: %v\n", err)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
