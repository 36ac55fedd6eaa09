package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/examples/approval/approvalgraph"
	"github.com/ilmek-go/ilmek/examples/approval/expense"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// command is one "$ " line of the README's session and the output the
// README shows for it.
type command struct {
	words []string
	want  string
}

// readmeSession reads the ```console block of README.md.
func readmeSession(t *testing.T) []command {
	t.Helper()
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []command
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "```console":
			in = true
		case in && line == "```":
			in = false
		case in && strings.HasPrefix(line, "$ "):
			words, err := shellWords(strings.TrimPrefix(line, "$ "))
			if err != nil {
				t.Fatalf("README.md: %q: %v", line, err)
			}
			cmds = append(cmds, command{words: words})
		case in && len(cmds) > 0:
			cmds[len(cmds)-1].want += line + "\n"
		}
	}
	if len(cmds) < 4 {
		t.Fatalf("README.md: %d commands in its console block; want the whole session", len(cmds))
	}
	return cmds
}

// shellWords splits a command line as sh would, for the README's plain
// words and double-quoted strings without escapes.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		return nil, errors.New("unterminated quote")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// TestREADMESession runs the README's session as written: go build, then
// every ./approval command as a process of its own against one SQLite
// file, so the decisions resume threads a previous process paused. Each
// command's output must be the README's, line for line.
func TestREADMESession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program and runs it as separate processes")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "approval")
	db := filepath.Join(dir, "approval.db")
	built := false
	for _, c := range readmeSession(t) {
		args := make([]string, len(c.words))
		for i, w := range c.words {
			switch {
			case w == "/tmp/approval.db":
				w = db
			case w == "approval" && i > 0 && c.words[i-1] == "-o":
				w = bin
			}
			args[i] = w
		}
		var cmd *exec.Cmd
		switch args[0] {
		case "go":
			cmd = exec.Command("go", args[1:]...)
			cmd.Dir = root
			built = true
		case "./approval":
			if !built {
				t.Fatal("README.md runs ./approval before building it")
			}
			cmd = exec.Command(bin, args[1:]...)
		default:
			t.Fatalf("README.md: unexpected command %q", strings.Join(c.words, " "))
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("$ %s: %v\n%s", strings.Join(c.words, " "), err, out)
		}
		if string(out) != c.want {
			t.Errorf("$ %s\ngot:\n%swant (README.md):\n%s", strings.Join(c.words, " "), out, c.want)
		}
	}
}

// TestCommandErrors checks that every refusal names what is wrong and the
// fix, and that a refused command leaves the claim as it was.
func TestCommandErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "approval.db")
	submit := []string{"-db", db, "submit", "-claim", "exp-1", "-employee", "alice", "-amount", "500", "-purpose", "hotel"}
	var out bytes.Buffer
	if err := run(t.Context(), submit, &out); err != nil {
		t.Fatalf("submit: %v", err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no command", []string{"-db", db}, "no command; want submit, pending or decide"},
		{"unknown command", []string{"-db", db, "approve"}, `unknown command "approve"`},
		{"no claim", []string{"-db", db, "pending"}, "pending: -claim is required"},
		{"stray argument", []string{"-db", db, "pending", "-claim", "exp-1", "now"}, `pending: unexpected argument "now"`},
		{"no amount", []string{"-db", db, "submit", "-claim", "exp-2"}, "submit: -amount 0: give the claimed amount in EUR, above 0"},
		{"submitted twice", submit, "submit: claim exp-1 exists already"},
		{"both verdicts", []string{"-db", db, "decide", "-claim", "exp-1", "-approve", "-reject", "-by", "bob"}, "give exactly one of -approve and -reject"},
		{"no verdict", []string{"-db", db, "decide", "-claim", "exp-1", "-by", "bob"}, "give exactly one of -approve and -reject"},
		{"no approver", []string{"-db", db, "decide", "-claim", "exp-1", "-approve"}, "decide: -by is required"},
		{"nothing to decide", []string{"-db", db, "decide", "-claim", "exp-404", "-approve", "-by", "bob"}, "claim exp-404 waits for no decision"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(t.Context(), tc.args, &out)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("run(%q) = %v; want an error containing %q", tc.args, err, tc.wantErr)
			}
		})
	}
	out.Reset()
	if err := run(t.Context(), []string{"-db", db, "pending", "-claim", "exp-1"}, &out); err != nil {
		t.Fatal(err)
	}
	if want := "exp-1: waits at review: Approve this expense claim? 500.00 EUR for alice (hotel)\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("after the refusals, pending says:\n%swant it to start with:\n%s", out.String(), want)
	}
}

// TestAnswerMustFitTheInterrupt resumes a paused claim with answers that
// are not an expense.Decision: each is refused before anything is written,
// and the claim still waits; the typed answer then finishes it.
func TestAnswerMustFitTheInterrupt(t *testing.T) {
	db := filepath.Join(t.TempDir(), "approval.db")
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-db", db, "submit", "-claim", "exp-3", "-employee", "erin", "-amount", "250", "-purpose", "books"}, &out); err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	g, err := approvalgraph.New(nodes{})
	if err != nil {
		t.Fatal(err)
	}
	thread := g.Thread(store, "exp-3")
	for _, bad := range []any{"yes", true, map[string]any{"approved": "yes"}} {
		if _, err := thread.Resume(t.Context(), runtime.Answer(bad)); err == nil {
			t.Errorf("Resume(%#v) succeeded; want a refusal of an answer that is not an expense.Decision", bad)
		}
	}
	pend, err := g.Thread(store, "exp-3").Pending(t.Context())
	if err != nil || len(pend) != 1 || pend[0].Node != "review" {
		t.Fatalf("after the refused answers: pending %v, %v; want the review still waiting", pend, err)
	}
	res, err := thread.Resume(t.Context(), runtime.Answer(expense.Decision{Approved: true, Approver: "bob"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"submitted: 250.00 EUR for erin (books)", "approved by bob", "paid: 250.00 EUR to erin, reference pay-EXP-3"}
	if res.Status != runtime.StatusDone || !res.State.Approved || res.State.Decision.Approver != "bob" || strings.Join(res.State.Log, "|") != strings.Join(want, "|") {
		t.Errorf("after the typed answer: %s, state %+v; want done, approved by bob, log %q", res.Status, res.State, want)
	}
}
