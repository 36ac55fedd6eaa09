package a2a_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/childproc"
	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/nodes/a2a/a2atest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// The environment of a crash test's child process.
const (
	envCrashMode = "ILMEK_A2A_CRASH_MODE" // "crash" or "recover"
	envCrashDir  = "ILMEK_A2A_CRASH_DIR"
)

// TestMain lets the test binary run as the child process of
// TestSendOnceAcrossSIGKILL and TestMessageSentAgainAcrossSIGKILL.
func TestMain(m *testing.M) {
	if mode := os.Getenv(envCrashMode); mode != "" {
		child := crashChild
		if strings.HasPrefix(mode, "serve-") {
			child = serveChild
		}
		if err := child(mode, os.Getenv(envCrashDir)); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashChild runs thread t of a graph whose one node sends "where is my
// order?" (each message/send one line in sends.log) and then, in mode
// crash, says READY and blocks until it is killed; in mode recover it runs
// the thread to its end, waiting out the dead process's lease.
func crashChild(mode, dir string) error {
	ctx := context.Background()
	store, err := sqlite.Open(filepath.Join(dir, "crash.db"), sqlite.LeaseTTL(300*time.Millisecond))
	if err != nil {
		return err
	}
	defer store.Close()
	script, err := a2atest.Load(agentJSON)
	if err != nil {
		return err
	}
	tr := a2atest.NewTransport(script)
	tr.Fail = func(req *a2a.Request) error {
		if req.Method != "message/send" {
			return nil
		}
		f, err := os.OpenFile(filepath.Join(dir, "sends.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString("message/send\n")
		return err
	}
	desk, err := a2a.Connect(ctx, tr)
	if err != nil {
		return err
	}
	call := a2a.CallFactory(desk)
	reg := runtime.Registry{"send_then_stall": func(n spec.Node) (runtime.NodeFunc, error) {
		fn, err := call(spec.Node{ID: n.ID, Type: "a2a_call", Config: n.Config})
		if err != nil {
			return nil, err
		}
		return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			out, err := fn(ctx, s)
			if err != nil || mode != "crash" {
				return out, err
			}
			fmt.Println("READY") // the send is journaled; the superstep has not committed
			time.Sleep(time.Minute)
			return nil, errors.New("not killed")
		}, nil
	}}
	g, err := runtime.Load("g.json", graphDoc(`{"id": "n", "type": "send_then_stall", "config": {"agent": "support-desk", "text": "where is my order?", "to": "reply", "textOnly": true}}`,
		`{"from": "__start__", "to": "n"}, {"from": "n", "to": "__end__"}`), reg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := g.Thread(store, "t").Invoke(ctx, nil)
		if errors.Is(err, runtime.ErrThreadBusy) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err != nil {
			return err
		}
		line, _ := json.Marshal(res.State["reply"])
		fmt.Printf("DONE %s %s\n", res.Status, line)
		return nil
	}
}

// A message journaled before its process was killed with SIGKILL is not
// sent again when another process runs the thread on.
func TestSendOnceAcrossSIGKILL(t *testing.T) {
	dir := t.TempDir()
	child := func(mode string) (*exec.Cmd, *bufio.Scanner) { return startChild(t, mode, dir) }
	sends := func() int { return linesIn(dir, "sends.log") }

	first, out := child("crash")
	if !out.Scan() || out.Text() != "READY" {
		first.Process.Kill()
		first.Wait()
		t.Fatalf("the crash child said %q, want READY", out.Text())
	}
	if n := sends(); n != 1 {
		t.Errorf("before the kill: %d sends, want 1", n)
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	first.Wait()

	second, out := child("recover")
	var lines []string
	for out.Scan() {
		lines = append(lines, out.Text())
	}
	if err := second.Wait(); err != nil {
		t.Fatalf("the recovering child: %v (said %q)", err, lines)
	}
	if want := `DONE done "Order ORD-42 totals 249.9."`; strings.Join(lines, "\n") != want {
		t.Errorf("the recovering child said %q, want %q", strings.Join(lines, "\n"), want)
	}
	if n := sends(); n != 1 {
		t.Errorf("after the restart: %d sends, want 1 (the journaled send replays)", n)
	}
}

// startChild starts the test binary as a crash test's child process in
// mode, on dir, and returns it with its standard output.
func startChild(t *testing.T, mode, dir string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	return childproc.Start(t, envCrashMode+"="+mode, envCrashDir+"="+dir)
}

// linesIn counts the lines of file name in dir (0 when it is missing).
func linesIn(dir, name string) int { return childproc.Lines(filepath.Join(dir, name)) }
