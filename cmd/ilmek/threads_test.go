package main

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// TestThreadsByStatusPages: a listing by status fills each page with
// threads of that status, reading on past threads of other statuses, and
// its cursors lead to every such thread once, newest first. It used to
// print a page of the store's threads filtered afterwards: often "(no
// threads)" and a cursor, although later pages held matches.
func TestThreadsByStatusPages(t *testing.T) {
	t.Setenv(envStore, "")
	db := filepath.Join(t.TempDir(), "app.db")
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	g := refunds(t)
	// oldest first: t1 and t3 wait on a person, t2 and t4 are done.
	for i, amount := range []float64{250, 40, 250, 40} {
		if _, err := g.Thread(st, "t"+strconv.Itoa(i+1)).Invoke(context.Background(), runtime.Values{"amount": amount}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	for _, c := range []struct {
		status string
		limit  int
		want   []string
	}{
		{"interrupted", 1, []string{"t3", "t1"}},
		{"interrupted", 2, []string{"t3", "t1"}},
		{"interrupted", 3, []string{"t3", "t1"}},
		{"done", 1, []string{"t4", "t2"}},
		{"new", 1, nil},
	} {
		t.Run(c.status+"/"+strconv.Itoa(c.limit), func(t *testing.T) {
			var got []string
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > 4 {
					t.Fatalf("more than 4 pages: %v", got)
				}
				args := []string{"--store", db, "threads", "--json", "--status", c.status, "--limit", strconv.Itoa(c.limit)}
				if cursor != "" {
					args = append(args, "--cursor", cursor)
				}
				code, out, errs := ilmek(args...)
				if code != exitOK {
					t.Fatalf("exit %d\n%s%s", code, out, errs)
				}
				var p threadsPage
				mustDecode(t, []byte(out), &p)
				if len(p.Threads) > c.limit || len(p.Threads) < c.limit && p.Next != "" {
					t.Errorf("page %d holds %d threads with limit %d and next %q", pages, len(p.Threads), c.limit, p.Next)
				}
				for _, th := range p.Threads {
					got = append(got, th.ID)
				}
				if p.Next == "" {
					break
				}
				cursor = p.Next
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("threads %v, want %v", got, c.want)
			}
		})
	}
	// A listing by status that matches nothing reads to the end of the
	// store: no cursor follows "(no threads)".
	if code, out, errs := ilmek("--store", db, "threads", "--status", "new", "--limit", "1"); code != exitOK || !strings.Contains(out, "(no threads)") || strings.Contains(out, "next page") {
		t.Errorf("threads --status new: exit %d\n%s%s", code, out, errs)
	}
}

// TestThreadsHidesInternalMeta: the tables of threads and show leave out
// the metadata keys ilmek keeps itself ("ilmek." and on: the server's
// graph, creation time, id and runs), as the server's API does; --json
// keeps them.
func TestThreadsHidesInternalMeta(t *testing.T) {
	t.Setenv(envStore, "")
	db := seedSQLite(t)
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	internal := map[string]string{"ilmek.graph": "refund", "ilmek.runs": "run-a:start run-b:resume", "ilmek.thread": "refund-1"}
	if err := st.RecordThread(context.Background(), "refund-1", checkpoint.ThreadWrite{Meta: internal}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, c := range []struct {
		args []string
		// out must appear in stdout, hidden must not.
		out, hidden []string
	}{
		{[]string{"threads"}, []string{"refund-1", "team=ops"}, []string{"ilmek.", "run-a"}},
		{[]string{"show", "refund-1"}, []string{"Metadata:", "team=ops"}, []string{"ilmek.", "run-a"}},
		{[]string{"threads", "--json"}, []string{`"ilmek.runs": "run-a:start run-b:resume"`, `"team": "ops"`}, nil},
		{[]string{"show", "--json", "refund-1"}, []string{`"ilmek.graph": "refund"`}, nil},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errs := ilmek(append([]string{"--store", db}, c.args...)...)
			expect(t, code, out, errs, want{code: exitOK, out: c.out, notOut: c.hidden})
		})
	}
}
