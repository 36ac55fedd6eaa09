package main

import (
	"strings"
	"testing"
)

// want is what a test expects of one ilmek invocation: its exit status,
// and what its stdout and stderr must and must not hold.
type want struct {
	code          int
	out, notOut   []string
	errs, notErrs []string
}

// expect fails t unless the invocation that exited code, printing out and
// errs, is what w wants; a wrong status stops the test.
func expect(t *testing.T, code int, out, errs string, w want) {
	t.Helper()
	if code != w.code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, w.code, out, errs)
	}
	for _, c := range []struct {
		name, text string
		has, lacks []string
	}{{"stdout", out, w.out, w.notOut}, {"stderr", errs, w.errs, w.notErrs}} {
		for _, s := range c.has {
			if !strings.Contains(c.text, s) {
				t.Errorf("%s lacks %q:\n%s", c.name, s, c.text)
			}
		}
		for _, s := range c.lacks {
			if strings.Contains(c.text, s) {
				t.Errorf("%s holds %q:\n%s", c.name, s, c.text)
			}
		}
	}
}
