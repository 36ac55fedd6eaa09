package main

import (
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	const skipped = `{"Action":"start","Package":"p/pg"}
{"Action":"run","Package":"p/pg","Test":"TestStore"}
{"Action":"output","Package":"p/pg","Test":"TestStore","Output":"=== RUN   TestStore\n"}
{"Action":"output","Package":"p/pg","Test":"TestStore","Output":"    pgtest.go:23: ILMEK_POSTGRES_DSN not set: skipping the PostgreSQL tests\n"}
{"Action":"skip","Package":"p/pg","Test":"TestStore"}
{"Action":"run","Package":"p/pg","Test":"TestOther"}
{"Action":"output","Package":"p/pg","Test":"TestOther","Output":"    x_test.go:9: skipped for another reason\n"}
{"Action":"skip","Package":"p/pg","Test":"TestOther"}
{"Action":"output","Package":"p/pg","Output":"PASS\n"}
{"Action":"output","Package":"p/pg","Output":"ok  \tp/pg\t0.1s\n"}
{"Action":"pass","Package":"p/pg"}
`
	const failing = `{"Action":"start","Package":"p/a"}
{"Action":"output","Package":"p/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"p/a","Test":"TestOK"}
{"Action":"output","Package":"p/a","Test":"TestBad","Output":"    a_test.go:3: want 2, got 3\n"}
{"Action":"fail","Package":"p/a","Test":"TestBad"}
{"Action":"output","Package":"p/a","Output":"FAIL\n"}
{"Action":"output","Package":"p/a","Output":"FAIL\tp/a\t0.1s\n"}
{"Action":"fail","Package":"p/a"}
`
	const broken = `{"ImportPath":"p/b [p/b.test]","Action":"build-output","Output":"b.go:1:1: syntax error\n"}
{"ImportPath":"p/b [p/b.test]","Action":"build-fail"}
{"Action":"start","Package":"p/b"}
{"Action":"output","Package":"p/b","Output":"FAIL\tp/b [build failed]\n"}
{"Action":"fail","Package":"p/b","FailedBuild":"p/b [p/b.test]"}
`
	const timedOut = `{"Action":"start","Package":"p/c"}
{"Action":"run","Package":"p/c","Test":"TestQuick"}
{"Action":"output","Package":"p/c","Test":"TestQuick","Output":"=== RUN   TestQuick\n"}
{"Action":"pass","Package":"p/c","Test":"TestQuick"}
{"Action":"run","Package":"p/c","Test":"TestSlow"}
{"Action":"output","Package":"p/c","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"output","Package":"p/c","Test":"TestSlow","Output":"panic: test timed out after 2s\n"}
{"Action":"output","Package":"p/c","Test":"TestSlow","Output":"\t\tTestSlow (2s)\n"}
{"Action":"output","Package":"p/c","Output":"FAIL\tp/c\t2.081s\n"}
{"Action":"fail","Package":"p/c","Elapsed":2.083}
`
	for _, c := range []struct {
		name, in string
		code     int
		want     string
	}{
		{"postgres skipped", skipped, 0, "ok  \tp/pg\t0.1s\nSKIP\tp/pg\t1 PostgreSQL tests skipped: no server (ILMEK_POSTGRES_DSN is not set; README, \"PostgreSQL tests\")\n"},
		{"failed test", failing, 1, "    a_test.go:3: want 2, got 3\nFAIL\nFAIL\tp/a\t0.1s\n"},
		{"build failure", broken, 1, "b.go:1:1: syntax error\nFAIL\tp/b [build failed]\n"},
		{"timed out", timedOut, 1, "=== RUN   TestSlow\npanic: test timed out after 2s\n\t\tTestSlow (2s)\nFAIL\tp/c\t2.081s\n"},
		{"nothing tested", "go: unknown flag -rcae\n", 1, "go: unknown flag -rcae\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			if code := report(strings.NewReader(c.in), &out); code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			if out.String() != c.want {
				t.Errorf("printed:\n%s\nwant:\n%s", out.String(), c.want)
			}
		})
	}
}
