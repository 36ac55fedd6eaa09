package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/internal/testhook"
)

// generated is the generated kind every test shares: its program is built
// once per test binary, for every case of every suite (see suites).
var generated = &GeneratedKind{BuildFlags: raceFlags}

func TestMain(m *testing.M) {
	if HelperRequested() {
		// Started again to make a run that kills its process (killRun).
		os.Exit(ServeHelper(nil, os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv(fakeProgramEnv) != "" {
		// The test binary stands in for a generated program (see
		// TestGeneratedKindSurvivesCrashes).
		os.Exit(ServeGenerated(fakePrograms, os.Stdin, os.Stdout, os.Stderr))
	}
	testhook.VerifyUnlessBenchmarking()
	var background sync.WaitGroup
	if !testing.Short() {
		// Build the generated kind's program while the other tests run.
		background.Go(func() { prepareOnce() })
	}
	code := m.Run()
	stopBuild() // a build no test waited for is not finished
	background.Wait()
	if err := generated.Close(); err != nil {
		println("conformance: removing the generated kind's temporary module:", err.Error())
	}
	os.Exit(code)
}

// suite is a named list of cases the tests run through every kind.
type suite struct {
	name  string
	cases []*Case
}

// loadSuites loads the repository's cases once: the public single-run and
// multi-run cases, the project's extra cases and the predicate truth table.
var loadSuites = sync.OnceValues(func() ([]suite, error) {
	var out []suite
	for _, dir := range []string{"cases", "multirun", "extra"} {
		cs, err := LoadDir(filepath.Join("testdata", dir))
		if err != nil {
			return nil, err
		}
		out = append(out, suite{dir, cs})
	}
	table, err := LoadTruthTable(filepath.Join("testdata", "predicates.json"))
	if err != nil {
		return nil, err
	}
	rows, err := table.Cases("predicates.json")
	if err != nil {
		return nil, err
	}
	return append(out, suite{"predicates", rows}), nil
})

// suites returns the suites of loadSuites.
func suites(t *testing.T) []suite {
	t.Helper()
	ss, err := loadSuites()
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// buildCtx bounds the background build of the generated kind's program;
// TestMain cancels it when the tests are done.
var buildCtx, stopBuild = context.WithCancel(context.Background())

// prepareOnce builds the generated kind's program for every case of every
// suite, once.
var prepareOnce = sync.OnceValue(func() error {
	ss, err := loadSuites()
	if err != nil {
		return err
	}
	var all []*Case
	for _, s := range ss {
		all = append(all, s.cases...)
	}
	return generated.Prepare(buildCtx, all)
})

// kinds returns the program kinds to test: the spec kind, and the generated
// kind (built once for every suite) unless -short.
func kinds(t *testing.T) []Kind {
	t.Helper()
	ks := []Kind{SpecKind{}}
	if testing.Short() {
		t.Log("-short: skipping the generated kind (it builds a module of generated packages)")
		return ks
	}
	if err := prepareOnce(); err != nil {
		t.Fatal(err)
	}
	return append(ks, generated)
}

// TestConformance runs every case of every suite through every program kind
// against every backend and compares what happened with what the case
// expects; a failure names the case file, the run and the differences.
func TestConformance(t *testing.T) {
	ss := suites(t)
	for _, kind := range kinds(t) {
		for _, name := range BackendNames {
			t.Run(kind.Name()+"/"+name, func(t *testing.T) {
				t.Parallel()
				b, err := OpenBackend(name)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				for _, s := range ss {
					obs, skips, err := RunBackend(context.Background(), kind, s.cases, b)
					if err != nil {
						t.Fatal(err)
					}
					for i, c := range s.cases {
						t.Run(s.name+"/"+c.Name, func(t *testing.T) {
							if skips[i] != "" {
								t.Skip(skips[i])
							}
							if kind.Name() == "generated" && name == "workers" && workersGeneratedInputBug[filepath.Base(c.File)] {
								t.Skip("known defect, shown by TestWorkersStartInputDecodesLikeUpdateOf: a start request decodes its input into the generated Update with encoding/json")
							}
							if d := Compare(c, obs[i]); len(d) > 0 {
								t.Errorf("%s (%s):\n%s", c.File, c.About, strings.Join(d, "\n"))
							}
						})
					}
				}
			})
		}
	}
}
