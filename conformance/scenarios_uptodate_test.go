package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/gen"
	"github.com/ilmek-go/ilmek/internal/cli"
)

// generateLine starts every //go:generate line of the scenarios.
const generateLine = "//go:generate go tool ilmekgen "

// TestScenarioPackagesUpToDate replays, in memory, the //go:generate line of
// every scenario (testdata/scenarios/*/scenario.go) as ilmekgen would run
// it, read by ilmekgen's own parser, and fails when a committed generated package differs from what the
// generator writes today (gen's TestExamplesUpToDate does not look here).
func TestScenarioPackagesUpToDate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*", "scenario.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(scenarios) {
		t.Errorf("%d scenario.go files under %s, %d scenarios in scenarios_list_test.go", len(files), scenarioDir, len(scenarios))
	}
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			line, err := generateArgs(file)
			if err != nil {
				t.Fatal(err)
			}
			inv, err := cli.ParseGen(filepath.Dir(file), line, false)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if len(inv.Specs) != 1 {
				t.Fatalf("%s: ilmekgen gen takes one SPEC, the line has %d", file, len(inv.Specs))
			}
			want, diags, err := inv.Generate(inv.Specs[0])
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if err := diags.Err(); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			fix := "run go generate ./" + filepath.ToSlash(filepath.Join("conformance", filepath.Dir(file)))
			for _, f := range want {
				got, err := os.ReadFile(filepath.Join(inv.Out, f.Name))
				if err != nil {
					t.Errorf("%s: %v; %s", f.Name, err, fix)
				} else if !bytes.Equal(got, f.Data) {
					t.Errorf("%s is stale (differs from what ilmekgen writes today); %s", filepath.Join(inv.Out, f.Name), fix)
				}
			}
			onDisk, _ := filepath.Glob(filepath.Join(inv.Out, "*.go"))
			for _, p := range onDisk {
				if !slices.Contains(gen.FileNames, filepath.Base(p)) {
					t.Errorf("%s is not a file ilmekgen writes; remove it", p)
				}
			}
		})
	}
}

// generateArgs returns the arguments of the file's ilmekgen //go:generate
// line.
func generateArgs(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var found []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if args, ok := strings.CutPrefix(sc.Text(), generateLine); ok {
			if found != nil {
				return nil, fmt.Errorf("%s: more than one ilmekgen //go:generate line", file)
			}
			found = strings.Fields(args)
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%s: no line starting %q", file, generateLine)
	}
	return found, sc.Err()
}
