package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// command is one "$ " line of the README's session and the output the
// README shows for it.
type command struct {
	words []string
	want  string
}

// readmeSession reads the ```console block of README.md; its commands are
// plain words, no quoting.
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
			cmds = append(cmds, command{words: strings.Fields(strings.TrimPrefix(line, "$ "))})
		case in && len(cmds) > 0:
			cmds[len(cmds)-1].want += line + "\n"
		}
	}
	if len(cmds) < 5 {
		t.Fatalf("README.md: %d commands in its console block; want the whole session", len(cmds))
	}
	return cmds
}

// TestREADMESession runs the README's session as written: go build, then
// every ./refund command as a process of its own against one SQLite file,
// so each answer resumes, inside the refund graph, a thread that a previous
// process paused there. Each command's output must be the README's, line
// for line, and each journaled step's effect must have run once over the
// whole session: the lookup in the process that paused, the refund in the
// one that answered.
func TestREADMESession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program and runs it as separate processes")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "refund")
	db := filepath.Join(dir, "refund.db")
	built := false
	var all strings.Builder
	for _, c := range readmeSession(t) {
		args := make([]string, len(c.words))
		for i, w := range c.words {
			switch {
			case w == "/tmp/refund.db":
				w = db
			case w == "refund" && i > 0 && c.words[i-1] == "-o":
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
		case "./refund":
			if !built {
				t.Fatal("README.md runs ./refund before building it")
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
		all.Write(out)
	}
	for effect, want := range map[string]int{
		"step lookup: order A7":                     1,
		"step refund: 49.90 EUR back for order A7":  1,
		"step lookup: order B2":                     1,
		"step refund: 120.00 EUR back for order B2": 0, // declined
	} {
		if got := strings.Count(all.String(), effect); got != want {
			t.Errorf("%q printed %d times over the session, want %d", effect, got, want)
		}
	}
}

// TestCommands runs the commands in process against one SQLite file: every
// refusal names what is wrong and the fix, and leaves the ticket waiting
// inside the refund graph; the right id then finishes it.
func TestCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "refund.db")
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-db", db, "open", "-ticket", "T-1", "-order", "A7"}, &out); err != nil {
		t.Fatalf("open: %v", err)
	}
	const paused = "T-1: waits for refund/approve:interrupt#0: Refund this order? A7, 49.90 EUR\n"
	if got, want := out.String(), "step lookup: order A7 paid 49.90 EUR\n"+paused; got != want {
		t.Fatalf("open printed:\n%swant:\n%s", got, want)
	}
	answer := func(id string, verdict ...string) []string {
		return append([]string{"-db", db, "answer", "-ticket", "T-1", "-id", id}, verdict...)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no command", []string{"-db", db}, "no command; want open or answer"},
		{"unknown command", []string{"-db", db, "approve"}, `unknown command "approve"`},
		{"no ticket", []string{"-db", db, "open", "-order", "A7"}, "open: -ticket is required"},
		{"no order", []string{"-db", db, "open", "-ticket", "T-2"}, "open: -order is required"},
		{"stray argument", []string{"-db", db, "open", "-ticket", "T-2", "-order", "A7", "now"}, `open: unexpected argument "now"`},
		{"opened twice", []string{"-db", db, "open", "-ticket", "T-1", "-order", "A7"}, "open: ticket T-1 exists already (it waits for an approval: answer it with refund -db " + db + " answer -ticket T-1"},
		{"no such order", []string{"-db", db, "open", "-ticket", "T-9", "-order", "ZZ"}, `order "ZZ": no such order`},
		{"reopened after a failed run", []string{"-db", db, "open", "-ticket", "T-9", "-order", "A7"}, "open: ticket T-9 exists already (its run failed before the refund was asked for, as open printed); give the new ticket an id of its own"},
		{"answer to a failed ticket", []string{"-db", db, "answer", "-ticket", "T-9", "-id", "refund/approve:interrupt#0", "-approve"}, "answer: ticket T-9 waits for no approval: its run failed"},
		{"answer to no ticket", []string{"-db", db, "answer", "-ticket", "T-404", "-id", "refund/approve:interrupt#0", "-approve"}, "answer: ticket T-404 waits for no approval: no ticket has that id; open it first"},
		{"no id", []string{"-db", db, "answer", "-ticket", "T-1", "-approve"}, "answer: -id is required"},
		{"no verdict", answer("refund/approve:interrupt#0"), "give exactly one of -approve and -decline"},
		{"both verdicts", answer("refund/approve:interrupt#0", "-approve", "-decline"), "give exactly one of -approve and -decline"},
		{"the child's id without its path", answer("approve:interrupt#0", "-approve"), `the pending ids are ["refund/approve:interrupt#0"]`},
		{"an id nobody asked", answer("refund/approve:interrupt#1", "-approve"), `no pending interrupt "refund/approve:interrupt#1"`},
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
	if err := run(t.Context(), answer("refund/approve:interrupt#0", "-approve"), &out); err != nil {
		t.Fatalf("answer after the refusals: %v", err)
	}
	want := "step refund: 49.90 EUR back for order A7\nT-1: done\n" +
		"  triage: a refund of order A7\n  refund/check: order A7, 49.90 EUR\n  refund/approve: approved\n  refund/issue: rf-a7\n  reply: refunded, reference rf-a7\n"
	if out.String() != want {
		t.Errorf("answer printed:\n%swant (no lookup: it ran before the pause):\n%s", out.String(), want)
	}
	for _, args := range [][]string{
		{"-db", db, "open", "-ticket", "T-1", "-order", "A7"},
		answer("refund/approve:interrupt#0", "-approve"),
	} {
		if err := run(t.Context(), args, &out); err == nil || !strings.Contains(err.Error(), "ticket T-1 exists already (it is closed)") && !strings.Contains(err.Error(), "ticket T-1 waits for no approval: it is closed") {
			t.Errorf("run(%q) on the closed ticket = %v; want it to say the ticket is closed", args, err)
		}
	}
}
