package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestSubcommandHelp: each subcommand's -h / --help lists that
// subcommand's flags (pflag's usage) and an example line, not the
// overview; `ilmekgen help` and a bare --help still print the overview.
func TestSubcommandHelp(t *testing.T) {
	cases := []struct {
		cmd   string
		flags []string
	}{
		{"gen", []string{"-o, --out", "-p, --package", "--type", "--config", "--bindings", "--check", "//go:generate go tool ilmekgen"}},
		{"check", []string{"--type", "--config", "--bindings", "ilmekgen check --type"}},
		{"fmt", []string{"-w, --write", "--check", "ilmekgen fmt --check"}},
		{"mermaid", []string{"--direction", "--types", "ilmekgen mermaid --direction LR"}},
		{"schema", []string{"--config", "ilmekgen schema --config"}},
		{"diff", []string{"--json", "ilmekgen diff approval-v3.json"}},
	}
	for _, c := range cases {
		for _, h := range []string{"-h", "--help"} {
			var out, errb bytes.Buffer
			if code := Run([]string{c.cmd, h}, &out, &errb); code != exitOK {
				t.Fatalf("%s %s: exit %d: %s", c.cmd, h, code, errb.String())
			}
			if !strings.Contains(out.String(), "Flags:\n") || strings.Contains(out.String(), "ilmekgen compiles a stored") {
				t.Errorf("%s %s printed the overview, or no flags:\n%s", c.cmd, h, out.String())
			}
			for _, f := range c.flags {
				if !strings.Contains(out.String(), f) {
					t.Errorf("%s %s: help lacks %q:\n%s", c.cmd, h, f, out.String())
				}
			}
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}} {
		var out, errb bytes.Buffer
		if code := Run(args, &out, &errb); code != exitOK || !strings.Contains(out.String(), "ilmekgen compiles a stored") {
			t.Errorf("%q: exit %d:\n%s", args, code, out.String())
		}
	}
}
