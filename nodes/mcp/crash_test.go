package mcp_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/childproc"
	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/nodes/mcp/mcptest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// The environment of a crash test's child process.
const (
	envCrashMode = "ILMEK_MCP_CRASH_MODE" // "crash" or "recover"
	envCrashDir  = "ILMEK_MCP_CRASH_DIR"
)

// TestMain lets the test binary run as the child process of
// TestToolCallOnceAcrossSIGKILL.
func TestMain(m *testing.M) {
	if mode := os.Getenv(envCrashMode); mode != "" {
		if err := crashChild(mode, os.Getenv(envCrashDir)); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashChild runs thread t of a graph whose one node calls github__search
// (each call one line in calls.log) and then, in mode crash, says READY
// and blocks until it is killed; in mode recover it runs the thread to its
// end, waiting out the dead process's lease.
func crashChild(mode, dir string) error {
	ctx := context.Background()
	store, err := sqlite.Open(filepath.Join(dir, "crash.db"), sqlite.LeaseTTL(300*time.Millisecond))
	if err != nil {
		return err
	}
	defer store.Close()
	script, err := mcptest.Load(serverJSON)
	if err != nil {
		return err
	}
	sess := mcptest.NewSession(script)
	sess.Fail = func(method string, _ any) error {
		if method != "tools/call" {
			return nil
		}
		f, err := os.OpenFile(filepath.Join(dir, "calls.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString("tools/call\n")
		return err
	}
	gh, err := mcp.Connect(ctx, "github", sess)
	if err != nil {
		return err
	}
	reg := mcp.Registry(gh)
	tool := reg["mcp_tool"]
	reg["tool_then_stall"] = func(n spec.Node) (runtime.NodeFunc, error) {
		fn, err := tool(spec.Node{ID: n.ID, Type: "mcp_tool", Config: n.Config})
		if err != nil {
			return nil, err
		}
		return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			out, err := fn(ctx, s)
			if err != nil || mode != "crash" {
				return out, err
			}
			fmt.Println("READY") // the call is journaled; the superstep has not committed
			time.Sleep(time.Minute)
			return nil, errors.New("not killed")
		}, nil
	}
	g, err := runtime.Load("g.json", graphDoc("tool_then_stall", `{"server": "github", "tool": "github__search", "to": "hits", "text": true}`), reg)
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
		fmt.Printf("DONE %s %v\n", res.Status, res.State["hits"])
		return nil
	}
}

// A tool call journaled before its process was killed with SIGKILL is not
// made again when another process runs the thread on.
func TestToolCallOnceAcrossSIGKILL(t *testing.T) {
	dir := t.TempDir()
	child := func(mode string) (*exec.Cmd, *bufio.Scanner) {
		return childproc.Start(t, envCrashMode+"="+mode, envCrashDir+"="+dir)
	}
	calls := func() int { return childproc.Lines(filepath.Join(dir, "calls.log")) }

	first, out := child("crash")
	if !out.Scan() || out.Text() != "READY" {
		first.Process.Kill()
		first.Wait()
		t.Fatalf("the crash child said %q, want READY", out.Text())
	}
	if n := calls(); n != 1 {
		t.Errorf("before the kill: %d calls, want 1", n)
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
	if want := "DONE done 3 results\nilmek, mekik, chativa"; strings.Join(lines, "\n") != want {
		t.Errorf("the recovering child said %q, want %q", strings.Join(lines, "\n"), want)
	}
	if n := calls(); n != 1 {
		t.Errorf("after the restart: %d calls, want 1 (the journaled call replays)", n)
	}
}
