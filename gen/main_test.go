package gen_test

import (
	"os"
	"testing"

	"github.com/ilmek-go/ilmek/internal/cli"
)

// TestMain lets this test binary act as ilmekgen, as cmd/ilmekgen's main
// does, when ILMEKGEN_RUN_MAIN is set: gen's internal tests (TestHostileCLI)
// run the command that way, since they cannot import internal/cli, which
// imports gen.
func TestMain(m *testing.M) {
	if os.Getenv("ILMEKGEN_RUN_MAIN") != "" {
		os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
