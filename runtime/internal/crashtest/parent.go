package crashtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Env is where a child works: the checkpointer file, the thread, the kind
// of graph (for crash and recover) and the directory of effects.log.
type Env struct {
	DB, Thread, Kind, Dir string
}

// Child is a running child process.
type Child struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *syncBuffer
	waited chan error
	last   string // the last line read
}

// Start re-executes the test binary as a child in mode (ModeHold,
// ModeCrash or ModeRecover) in env. The test binary's TestMain must call
// Main. The child is killed when the test ends.
func Start(t testing.TB, mode string, env Env) *Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.count=1")
	cmd.Env = append(os.Environ(), envMode+"="+mode, envDB+"="+env.DB, envThread+"="+env.Thread, envKind+"="+env.Kind, envDir+"="+env.Dir)
	c := &Child{t: t, cmd: cmd, lines: make(chan string, 16), stderr: &syncBuffer{}, waited: make(chan error, 1)}
	cmd.Stderr = c.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child %s: %v", mode, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
		c.waited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		for range c.lines { // let the reader goroutine finish
		}
	})
	return c
}

// WaitLine reads the child's output until a line equals want, and fails
// the test if the child ends or timeout passes first.
func (c *Child) WaitLine(want string, timeout time.Duration) {
	c.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("child ended before printing %q; stderr:\n%s", want, c.stderr)
			}
			c.last = line
			if line == want {
				return
			}
		case <-deadline:
			c.t.Fatalf("child did not print %q within %v; stderr:\n%s", want, timeout, c.stderr)
		}
	}
}

// Kill kills the child with SIGKILL and waits until it is gone.
func (c *Child) Kill() {
	c.t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatalf("SIGKILL child: %v", err)
	}
	err := c.wait(10 * time.Second)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		c.t.Fatalf("child did not die of SIGKILL: %v", err)
	}
}

// Finish closes the child's standard input (a ModeHold child releases its
// lease and exits) and waits for it to exit successfully.
func (c *Child) Finish(timeout time.Duration) {
	c.t.Helper()
	c.stdin.Close()
	if err := c.wait(timeout); err != nil {
		c.t.Fatalf("child failed: %v; stderr:\n%s", err, c.stderr)
	}
}

// Report waits for a ModeRecover child to exit and returns its Report.
func (c *Child) Report(timeout time.Duration) Report {
	c.t.Helper()
	c.Finish(timeout)
	var rep Report
	if err := json.Unmarshal([]byte(c.last), &rep); err != nil {
		c.t.Fatalf("child's last line %q is not a report: %v", c.last, err)
	}
	return rep
}

func (c *Child) wait(timeout time.Duration) error {
	c.t.Helper()
	timer := time.After(timeout)
	for {
		select {
		case line, ok := <-c.lines:
			if ok {
				c.last = line
				continue
			}
			return <-c.waited
		case <-timer:
			c.cmd.Process.Kill()
			c.t.Fatalf("child did not exit within %v; stderr:\n%s", timeout, c.stderr)
		}
	}
}

// EffectLines returns the lines of effects.log in dir: one per call of A's
// step function.
func EffectLines(t testing.TB, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, EffectsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// syncBuffer is a bytes.Buffer safe for the writer goroutine of exec and
// the test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
