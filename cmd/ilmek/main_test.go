package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// refunds is the graph of the tests: a refund of 100 or more waits on a
// person's yes or no.
func refunds(t testing.TB) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("refund").Channel("amount", "").Channel("approved", "").Channel("log", spec.Append).
		Node("review", func(c *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			amount, _ := s["amount"].(float64)
			if amount < 100 {
				return runtime.Values{"approved": true, "log": "auto"}, nil
			}
			ok, err := runtime.Interrupt[bool](c, map[string]any{"question": fmt.Sprintf("refund %.0f?", amount)})
			if err != nil {
				return nil, err
			}
			return runtime.Values{"approved": ok, "log": "reviewed"}, nil
		}).
		Edge(spec.Start, "review").Edge("review", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// ilmek runs the command and returns its exit status, stdout and stderr.
func ilmek(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// seedSQLite writes two threads to a new SQLite file: refund-1 waits on a
// person, refund-2 is done.
func seedSQLite(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "app.db")
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := refunds(t)
	for _, r := range []struct {
		thread string
		amount float64
	}{{"refund-1", 250}, {"refund-2", 40}} {
		if _, err := g.Thread(st, r.thread).Invoke(context.Background(), runtime.Values{"amount": r.amount},
			runtime.WithThreadMeta(map[string]string{"team": "ops"})); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func TestSQLite(t *testing.T) {
	db := seedSQLite(t)
	for _, c := range []struct {
		name string
		args []string
		code int
		// out and errs must appear in stdout and stderr.
		out, errs []string
		// decode, when set, checks the --json output.
		decode func(t *testing.T, out []byte)
	}{
		{name: "threads table", args: []string{"--store", db, "threads"}, out: []string{"THREAD", "refund-1  interrupted", "refund-2  done", "team=ops"}},
		{name: "threads json", args: []string{"threads", "--store", db, "--json"}, decode: func(t *testing.T, out []byte) {
			var p threadsPage
			mustDecode(t, out, &p)
			got := map[string]runtime.Status{}
			for _, th := range p.Threads {
				got[th.ID] = th.Status
			}
			if got["refund-1"] != runtime.StatusInterrupted || got["refund-2"] != runtime.StatusDone || len(got) != 2 {
				t.Errorf("threads: %v", got)
			}
		}},
		{name: "threads by status", args: []string{"threads", "--store", "sqlite:" + db, "--json", "--status", "interrupted"}, decode: func(t *testing.T, out []byte) {
			var p threadsPage
			mustDecode(t, out, &p)
			if len(p.Threads) != 1 || p.Threads[0].ID != "refund-1" || len(p.Threads[0].Pending) != 1 {
				t.Errorf("interrupted threads: %+v", p.Threads)
			}
		}},
		{name: "threads paged", args: []string{"threads", "--store", db, "--limit", "1"}, out: []string{"refund-", "next page: --cursor "}},
		{name: "threads new", args: []string{"threads", "--store", db, "--status", "new"}, out: []string{"(no threads)"}},
		{name: "threads meta", args: []string{"threads", "--store", db, "--meta", "team=sales"}, out: []string{"(no threads)"}},
		{name: "status misspelt", args: []string{"threads", "--store", db, "--status", "interupted"}, code: exitUsage, errs: []string{`did you mean "interrupted"`}},
		{name: "flag misspelt", args: []string{"threads", "--store", db, "--statsu", "done"}, code: exitUsage, errs: []string{"did you mean --status?"}},
		{name: "command misspelt", args: []string{"--store", db, "thraeds"}, code: exitUsage, errs: []string{`did you mean "threads"`}},
		{name: "show table", args: []string{"--store", db, "show", "refund-1"}, out: []string{"Status:", "interrupted", "Pending questions:", "review:interrupt#0", "answer: bool", "refund 250?", "Next:", "review", `"amount": 250`}},
		{name: "show json", args: []string{"--store", db, "--json", "show", "refund-1"}, decode: func(t *testing.T, out []byte) {
			var v showView
			mustDecode(t, out, &v)
			if v.Status != runtime.StatusInterrupted || len(v.Pending) != 1 || v.Pending[0].ID != "review:interrupt#0" ||
				len(v.Next) != 1 || v.Next[0].Node != "review" || v.Meta["team"] != "ops" || v.Checkpoint == "" {
				t.Errorf("show: %+v", v)
			}
			var state map[string]any
			if err := json.Unmarshal(v.State, &state); err != nil || state["amount"] != 250.0 {
				t.Errorf("show: state %s (%v)", v.State, err)
			}
		}},
		{name: "show done", args: []string{"--store", db, "--json", "show", "refund-2"}, decode: func(t *testing.T, out []byte) {
			var v showView
			mustDecode(t, out, &v)
			if v.Status != runtime.StatusDone || len(v.Next) != 0 || v.Run == "" || v.Ended.IsZero() {
				t.Errorf("show: %+v", v)
			}
		}},
		{name: "show unknown", args: []string{"--store", db, "show", "refund-9"}, code: exitFail, errs: []string{`thread "refund-9": no such thread`, "ilmek threads"}},
		{name: "history table", args: []string{"--store", db, "history", "refund-2"}, out: []string{"CHECKPOINT", "STEP", "approved, log"}},
		{name: "history json", args: []string{"--store", db, "history", "--json", "refund-2"}, decode: func(t *testing.T, out []byte) {
			var hs []historyEntry
			mustDecode(t, out, &hs)
			if len(hs) < 2 {
				t.Fatalf("history: %d checkpoints, want 2 or more", len(hs))
			}
			last := hs[0]
			chans := []string{}
			for _, w := range last.Writes {
				chans = append(chans, w.Channel)
			}
			if last.Step <= hs[len(hs)-1].Step || strings.Join(chans, ",") != "approved,log" || last.Created.IsZero() {
				t.Errorf("history: newest %+v (writes %v)", last, chans)
			}
		}},
		{name: "answer refused", args: []string{"--store", db, "answer", "refund-1", "true"}, code: exitFail, errs: []string{"answer on SQLite", "POST /threads/refund-1/resume"}},
		{name: "fork refused", args: []string{"--store", db, "fork", "--from", "x", "refund-1"}, code: exitFail, errs: []string{"fork on SQLite", "Thread.Fork"}},
		{name: "cancel refused", args: []string{"--store", db, "cancel", "refund-1"}, code: exitFail, errs: []string{"cancel on SQLite"}},
		{name: "check", args: []string{"--store", db, "check"}, out: []string{"intact"}},
		{name: "check json", args: []string{"--store", db, "check", "--json"}, decode: func(t *testing.T, out []byte) {
			var r struct{ Intact bool }
			mustDecode(t, out, &r)
			if !r.Intact {
				t.Error("check: not intact")
			}
		}},
		{name: "prune json", args: []string{"--store", db, "prune", "--json", "--keep-last", "1", "refund-2"}, decode: func(t *testing.T, out []byte) {
			var r []struct {
				Thread  string
				Dropped int
			}
			mustDecode(t, out, &r)
			if len(r) != 1 || r[0].Thread != "refund-2" {
				t.Errorf("prune: %+v", r)
			}
		}},
		{name: "prune without rule", args: []string{"--store", db, "prune", "refund-2"}, code: exitUsage, errs: []string{"--keep-last"}},
		{name: "delete unconfirmed", args: []string{"--store", db, "delete", "refund-2"}, code: exitUsage, errs: []string{"--yes"}},
		{name: "delete", args: []string{"--store", db, "delete", "--yes", "--json", "refund-2"}, decode: func(t *testing.T, out []byte) {
			var r struct{ Deleted []string }
			mustDecode(t, out, &r)
			if len(r.Deleted) != 1 {
				t.Errorf("delete: %+v", r)
			}
		}},
		{name: "deleted is gone", args: []string{"--store", db, "show", "refund-2"}, code: exitFail, errs: []string{"no such thread"}},
		{name: "no file", args: []string{"--store", filepath.Join(t.TempDir(), "none.db"), "threads"}, code: exitFail, errs: []string{"no SQLite file at"}},
		{name: "no store", args: []string{"threads"}, code: exitUsage, errs: []string{"no store"}},
		{name: "help show", args: []string{"help", "show"}, out: []string{"Usage: ilmek show", "--checkpoint"}},
		{name: "show --help", args: []string{"show", "--help"}, out: []string{"Usage: ilmek show"}},
		{name: "overview", args: []string{"--help"}, out: []string{"Commands:", "threads", "prune"}},
		{name: "version json", args: []string{"version", "--json"}, decode: func(t *testing.T, out []byte) {
			var v struct{ Version string }
			mustDecode(t, out, &v)
			if v.Version == "" {
				t.Error("no version")
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(envStore, "")
			code, out, errs := ilmek(c.args...)
			expect(t, code, out, errs, want{code: c.code, out: c.out, errs: c.errs})
			if c.decode != nil {
				c.decode(t, []byte(out))
			}
		})
	}
}

// TestShowNamesTheHelpOfEachCommand: every command has its own help.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands {
		code, out, errs := ilmek(c, "--help")
		if code != exitOK || !strings.HasPrefix(out, "Usage: ilmek "+c) {
			t.Errorf("%s --help: exit %d\n%s%s", c, code, out, errs)
		}
	}
}

// TestCheckFindsDamage: check exits 1 and names the damage of a file whose
// pages were overwritten.
func TestCheckFindsDamage(t *testing.T) {
	db := seedSQLite(t)
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	page := int(data[16])<<8 | int(data[17]) // the header's page size
	if page == 1 {
		page = 65536
	}
	if len(data) < 3*page {
		t.Skipf("the file has %d bytes, too few pages to damage one", len(data))
	}
	for p := len(data) / page / 2 * page; p+8 <= len(data); p += page {
		copy(data[p:], "\xA5\xA5\xA5\xA5\xA5\xA5\xA5\xA5") // the b-tree page headers of the file's second half
	}
	if err := os.WriteFile(db, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := ilmek("--store", db, "--json", "check")
	t.Logf("stderr: %s", errs)
	if code != exitFail {
		t.Fatalf("check of a damaged file: exit %d\n%s%s", code, out, errs)
	}
	var r struct {
		Intact bool
		Damage string
	}
	mustDecode(t, []byte(out), &r)
	if r.Intact || r.Damage == "" || !strings.Contains(errs, "damaged") {
		t.Errorf("check: %+v, stderr %s", r, errs)
	}
}

func mustDecode(t *testing.T, out []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !strings.Contains(err.Error(), "unknown field") {
		t.Fatalf("the --json output does not decode: %v\n%s", err, out)
	}
}
