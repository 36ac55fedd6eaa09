// Package childproc starts the running test binary again as a child
// process: what the crash tests run, kill with SIGKILL and run again, to
// prove with real processes that a journaled effect is not made twice.
package childproc

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Start runs the test binary (os.Args[0]) with no test selected and env
// ("KEY=value" pairs) added to its environment, which its TestMain reads
// to play the child; it returns the process and a scanner of its standard
// output. The child's standard error is the test's.
func Start(t testing.TB, env ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out)
}

// Lines counts the lines of the file at path, 0 when it is missing: a
// child's record of the effects it made, a line each.
func Lines(path string) int {
	data, _ := os.ReadFile(path)
	return strings.Count(string(data), "\n")
}
