package runtime_test

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
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// The environment of TestSubgraphStepOnceAcrossSIGKILL's child process.
const (
	envSubgraphCrash    = "ILMEK_SUBGRAPH_CRASH" // "crash" or "recover"
	envSubgraphCrashDir = "ILMEK_SUBGRAPH_CRASH_DIR"
)

// subgraphCrashChild runs thread t of a parent (pre, then subgraph c) whose
// child runs a then b, each a journaled step that writes a line to
// effects.log. In mode crash, b says READY after its step and blocks until
// the process is killed; in mode recover the thread runs to its end,
// waiting out the dead process's lease. It returns the exit status.
func subgraphCrashChild(mode, dir string) int {
	err := func() error {
		store, err := sqlite.Open(filepath.Join(dir, "crash.db"), sqlite.LeaseTTL(300*time.Millisecond))
		if err != nil {
			return err
		}
		defer store.Close()
		effect := func(ctx *runtime.Ctx, name string) error {
			_, err := runtime.Step(ctx, name, func() (bool, error) {
				f, err := os.OpenFile(filepath.Join(dir, "effects.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					return false, err
				}
				defer f.Close()
				_, err = f.WriteString(name + "\n")
				return true, err
			})
			return err
		}
		child, err := runtime.NewBuilder("k").Channel("log", spec.Append).
			Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				return runtime.Values{"log": "a"}, effect(ctx, "a")
			}).
			Node("b", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				if err := effect(ctx, "b"); err != nil {
					return nil, err
				}
				if mode == "crash" {
					fmt.Println("READY") // b's step is journaled; nothing after it committed
					time.Sleep(time.Minute)
					return nil, errors.New("not killed")
				}
				return runtime.Values{"log": "b"}, nil
			}).
			Edge(spec.Start, "a").Edge("a", "b").Edge("b", spec.End).Compile()
		if err != nil {
			return err
		}
		parent, err := runtime.NewBuilder("p").Channel("log", spec.Append).
			Node("pre", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				return runtime.Values{"log": "pre"}, effect(ctx, "pre")
			}).
			Subgraph("c", child, nil, map[string]string{"log": "log"}).
			Edge(spec.Start, "pre").Edge("pre", "c").Edge("c", spec.End).Compile()
		if err != nil {
			return err
		}
		deadline := time.Now().Add(time.Minute)
		for {
			res, err := parent.Thread(store, "t").Invoke(context.Background(), nil)
			if errors.Is(err, runtime.ErrThreadBusy) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			if err != nil {
				return err
			}
			fmt.Printf("DONE %s %v\n", res.Status, res.State["log"])
			return nil
		}
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "subgraph crash child:", err)
		return 2
	}
	return 0
}

// A step inside a child that completed before its process was killed with
// SIGKILL does not run again when another process runs the thread on, and
// neither does anything the child or the parent committed before.
func TestSubgraphStepOnceAcrossSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts two processes")
	}
	dir := t.TempDir()
	start := func(mode string) (*exec.Cmd, *bufio.Scanner) {
		return childproc.Start(t, envSubgraphCrash+"="+mode, envSubgraphCrashDir+"="+dir)
	}
	effects := func() string {
		data, _ := os.ReadFile(filepath.Join(dir, "effects.log"))
		return strings.Join(strings.Fields(string(data)), ",")
	}
	first, out := start("crash")
	if !out.Scan() || out.Text() != "READY" {
		_ = first.Process.Kill()
		_ = first.Wait()
		t.Fatalf("the crash child said %q, want READY", out.Text())
	}
	if got := effects(); got != "pre,a,b" {
		t.Fatalf("before the kill: effects %s, want pre,a,b", got)
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = first.Wait()

	second, out := start("recover")
	var lines []string
	for out.Scan() {
		lines = append(lines, out.Text())
	}
	if err := second.Wait(); err != nil {
		t.Fatalf("recover: %v (%v)", err, lines)
	}
	if len(lines) != 1 || lines[0] != "DONE done [pre a b]" {
		t.Fatalf("recover said %v", lines)
	}
	if got := effects(); got != "pre,a,b" {
		t.Errorf("after the recovery: effects %s, want pre,a,b (a step ran again)", got)
	}
}
