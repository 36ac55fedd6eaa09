package main

import (
	"strings"
	"testing"
)

// TestDeleteAndPruneRefuseMissingThreads: delete and prune check every
// THREAD before they change any: a malformed id or a thread the store does
// not hold fails the whole command (exit 2 or 1, naming it) and leaves the
// other threads as they were. delete used to print "deleted nope" for a
// thread that does not exist, and to delete the threads before a bad id.
func TestDeleteAndPruneRefuseMissingThreads(t *testing.T) {
	t.Setenv(envStore, "")
	for _, c := range []struct {
		name string
		args []string
		code int
		errs []string
	}{
		{name: "delete missing", args: []string{"delete", "--yes", "nope"}, code: exitFail, errs: []string{`"nope"`, "no such thread", "nothing was deleted"}},
		{name: "delete missing after one", args: []string{"delete", "--yes", "refund-2", "nope", "refund-1"}, code: exitFail, errs: []string{`"nope"`, "no such thread"}},
		{name: "delete two missing", args: []string{"delete", "--yes", "nope", "refund-1", "gone"}, code: exitFail, errs: []string{`"nope", "gone"`, "no such thread"}},
		{name: "delete bad id", args: []string{"delete", "--yes", "refund-2", "bad/id"}, code: exitUsage, errs: []string{"bad/id"}},
		{name: "prune missing", args: []string{"prune", "--keep-last", "1", "refund-2", "nope"}, code: exitFail, errs: []string{`"nope"`, "no such thread", "nothing was pruned"}},
		{name: "prune bad id", args: []string{"prune", "--keep-last", "1", "refund-2", "bad/id"}, code: exitUsage, errs: []string{"bad/id"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := seedSQLite(t)
			histories := map[string]string{}
			for _, id := range []string{"refund-1", "refund-2"} {
				_, histories[id], _ = ilmek("--store", db, "history", "--json", id)
			}
			code, out, errs := ilmek(append([]string{"--store", db}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errs)
			}
			if out != "" {
				t.Errorf("stdout: %s", out)
			}
			for _, s := range c.errs {
				if !strings.Contains(errs, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errs)
				}
			}
			for id, before := range histories {
				if code, after, errs := ilmek("--store", db, "history", "--json", id); code != exitOK || after != before {
					t.Errorf("thread %s changed: exit %d %s\nbefore:\n%s\nafter:\n%s", id, code, errs, before, after)
				}
			}
		})
	}
}
