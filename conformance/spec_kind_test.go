package conformance

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
)

// backends are the checkpointers every case runs against.
var backends = map[string]func() runtime.Checkpointer{
	"memory": func() runtime.Checkpointer { return runtime.NewMemory() },
}

func TestCasesSpecKind(t *testing.T) {
	for _, dir := range []string{"cases", "multirun"} {
		cases, err := LoadDir(filepath.Join("testdata", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			for name, cp := range backends {
				t.Run(dir+"/"+c.Name+"/"+name, func(t *testing.T) {
					got := RunSpecKind(context.Background(), c, cp)
					if d := Compare(c, got); len(d) > 0 {
						t.Errorf("%s:\n%s", c.File, strings.Join(d, "\n"))
					}
				})
			}
		}
	}
}

func TestPredicateTruthTableSpecKind(t *testing.T) {
	table, err := LoadTruthTable(filepath.Join("testdata", "predicates.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := table.Cases("predicates.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 200 {
		t.Fatalf("only %d rows", len(cases))
	}
	for _, c := range cases {
		got := RunSpecKind(context.Background(), c, backends["memory"])
		if d := Compare(c, got); len(d) > 0 {
			t.Errorf("%s:\n%s", c.Name, strings.Join(d, "\n"))
		}
	}
}
