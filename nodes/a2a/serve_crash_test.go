package a2a_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// serveChild serves, on a SQLite store in dir, a graph whose node makes
// one effect in a Step (a line in effects.log) and replies "charged
// <n>", and sends it message "pay-1" (no context). In mode serve-crash the
// node says READY after its effect and blocks until the process is
// killed; in mode serve-recover a second Server, in a new process, is
// sent the message again until the dead process's lease lapses, and
// prints the task it answers.
func serveChild(mode, dir string) error {
	store, err := sqlite.Open(filepath.Join(dir, "serve.db"), sqlite.LeaseTTL(300*time.Millisecond))
	if err != nil {
		return err
	}
	defer store.Close()
	g, err := runtime.NewBuilder("Pay").Channel("question", "").Channel("reply", "").
		Node("charge", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			n, err := runtime.Step(c, "charge", func() (int, error) {
				f, err := os.OpenFile(filepath.Join(dir, "effects.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					return 0, err
				}
				defer f.Close()
				_, err = f.WriteString("charged\n")
				return 1, err
			})
			if err != nil {
				return nil, err
			}
			if mode == "serve-crash" {
				fmt.Println("READY") // the effect is journaled; the superstep has not committed
				time.Sleep(time.Minute)
				return nil, errors.New("not killed")
			}
			return runtime.Values{"reply": fmt.Sprintf("charged %d", n)}, nil
		}).Edge(spec.Start, "charge").Compile()
	if err != nil {
		return err
	}
	s, err := a2a.Serve(g, store, a2a.ServeConfig[runtime.Values, runtime.Values]{
		Input:  func(text string) (runtime.Values, error) { return runtime.Values{"question": text}, nil },
		Output: func(s runtime.Values) string { r, _ := s["reply"].(string); return r },
	})
	if err != nil {
		return err
	}
	send := &a2a.Request{JSONRPC: "2.0", ID: 1, Method: "message/send", Params: map[string]any{
		"message": a2a.Message{Kind: "message", MessageID: "pay-1", Role: "user", Parts: []a2a.Part{a2a.TextPart("pay the invoice")}}}}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		r, err := s.Post(context.Background(), send)
		if err != nil {
			return err
		}
		if r.Error != nil {
			// Refused before anything ran (the dead process's lease
			// has not lapsed yet): the caller sends it again.
			if time.Now().Before(deadline) {
				continue
			}
			return fmt.Errorf("message/send: %+v", r.Error)
		}
		fmt.Printf("TASK %s\n", r.Result)
		return nil
	}
}

// TestMessageSentAgainAcrossSIGKILL: a Server's process is killed with
// SIGKILL while the run of a message runs, after the run's effect was
// journaled. The caller sends the message again to a new process on the
// same store: the new Server finds the message in its thread's record,
// continues the run from its latest checkpoint (the journaled effect
// replays) and answers completed; the effect happened once. Before, the
// new Server ran the graph again for the message, on a new thread: the
// effect twice.
func TestMessageSentAgainAcrossSIGKILL(t *testing.T) {
	dir := t.TempDir()
	first, out := startChild(t, "serve-crash", dir)
	if !out.Scan() || out.Text() != "READY" {
		first.Process.Kill()
		first.Wait()
		t.Fatalf("the crash child said %q, want READY", out.Text())
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	first.Wait()

	second, out := startChild(t, "serve-recover", dir)
	var lines []string
	for out.Scan() {
		lines = append(lines, out.Text())
	}
	if err := second.Wait(); err != nil {
		t.Fatalf("the restarted server: %v (said %q)", err, lines)
	}
	said := strings.Join(lines, "\n")
	if !strings.HasPrefix(said, "TASK ") || !strings.Contains(said, `"state":"completed"`) || !strings.Contains(said, `"text":"charged 1"`) {
		t.Errorf("the restarted server answered %s; want a completed task replying \"charged 1\"", said)
	}
	if n := linesIn(dir, "effects.log"); n != 1 {
		t.Errorf("the effect happened %d times, want once", n)
	}
}
