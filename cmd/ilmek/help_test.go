package main

import "testing"

// TestHelp: help finds its command after the common flags (a misspelt one
// gets the suggestion it gets without them), and the helps name the flags
// and marks the README documents.
func TestHelp(t *testing.T) {
	t.Setenv(envStore, "")
	for _, c := range []struct {
		name string
		args []string
		code int
		// out and errs must appear in stdout and stderr, notErrs must not
		// appear in stderr.
		out, errs, notErrs []string
	}{
		{name: "misspelt", args: []string{"help", "threds"}, code: exitUsage, errs: []string{`did you mean "threads"`}},
		{name: "misspelt after --store", args: []string{"--store", "/tmp/approval.db", "help", "threds"}, code: exitUsage,
			errs: []string{`"threds"`, `did you mean "threads"`}, notErrs: []string{"--store", "approval.db"}},
		{name: "after --store and --json", args: []string{"--store", "app.db", "--json", "help", "threads"}, out: []string{"Usage: ilmek threads"}},
		{name: "after --store, help's own", args: []string{"--store", "app.db", "help"}, out: []string{"Commands:"}},
		{name: "two commands", args: []string{"--store", "app.db", "help", "threads", "show"}, code: exitUsage, errs: []string{`"threads show"`}},
		{name: "threads usage", args: []string{"threads", "--help"}, out: []string{"[--updated-after T] [--updated-before T]"}},
		{name: "overview", args: []string{"--help"}, out: []string{"--updated-after, --updated-before"}},
		{name: "history's +", args: []string{"help", "history"}, out: []string{"log+"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := ilmek(c.args...)
			expect(t, code, out, errs, want{code: c.code, out: c.out, errs: c.errs, notErrs: c.notErrs})
		})
	}
}
