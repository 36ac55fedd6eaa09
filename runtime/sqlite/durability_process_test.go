package sqlite_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// The kill test of DurableWithNextWrite: a child process runs a chain
// whose even nodes each run a journaled effect (a line appended to a
// file) and print STEP once their Step returned, and whose odd nodes run
// while the checkpoint before them is kept unwritten. The parent kills
// the child with SIGKILL at a random point, again and again, until a
// child finishes the thread. An effect whose Step returned before a kill
// must never run again; the thread must end with every node's write
// exactly once.

// Environment of a next-write child.
const (
	envNextDB      = "ILMEK_NEXTWRITE_DB"
	envNextEffects = "ILMEK_NEXTWRITE_EFFECTS"
	envNextRound   = "ILMEK_NEXTWRITE_ROUND"
)

// nextWriteNodes is the chain's length.
const nextWriteNodes = 40

// nextWriteChild runs the test binary as a next-write child when the
// parent started it as one, and exits; otherwise it returns at once.
func nextWriteChild() {
	if os.Getenv(envNextDB) == "" {
		return
	}
	if err := runNextWriteChild(os.Getenv(envNextDB), os.Getenv(envNextEffects), os.Getenv(envNextRound)); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// nextWriteGraph's effects append "<node> <round>" lines to effects.
func nextWriteGraph(effects *os.File, round string) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	b := runtime.NewBuilder("nextwrite").Channel("log", spec.Append)
	prev := spec.Start
	for i := range nextWriteNodes {
		name := fmt.Sprintf("n%d", i)
		b = b.Node(name, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if i%2 == 0 {
				_, err := runtime.Step(ctx, "effect", func() (bool, error) {
					_, err := fmt.Fprintln(effects, name, round)
					return true, err
				})
				if err != nil {
					return nil, err
				}
				fmt.Println("STEP", name)
			}
			time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
			return runtime.Values{"log": name}, nil
		}).Edge(prev, name)
		prev = name
	}
	return b.Edge(prev, spec.End).Compile()
}

func runNextWriteChild(db, effectsPath, round string) error {
	s, err := sqlite.Open(db, sqlite.LeaseTTL(testTTL))
	if err != nil {
		return err
	}
	defer s.Close()
	effects, err := os.OpenFile(effectsPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer effects.Close()
	g, err := nextWriteGraph(effects, round)
	if err != nil {
		return err
	}
	th := g.Thread(s, "kill")
	// A run that ended the thread may have been killed before it said so:
	// another plain run would start the chain again, as a new turn.
	if cp, err := s.Get(context.Background(), "kill", ""); err == nil && cp.Step > 0 && len(cp.Next) == 0 {
		fmt.Println("DONE", runtime.StatusDone)
		return nil
	}
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := th.Invoke(context.Background(), nil, runtime.WithDurability(runtime.DurableWithNextWrite), runtime.WithRecursionLimit(100))
		switch {
		case errors.Is(err, runtime.ErrThreadBusy) && time.Now().Before(deadline):
			time.Sleep(20 * time.Millisecond)
			continue
		case err != nil:
			return err
		}
		fmt.Println("DONE", res.Status)
		return nil
	}
}

// TestDurableWithNextWriteSurvivesKills: see the top of this file.
func TestDurableWithNextWriteSurvivesKills(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, effectsPath := filepath.Join(dir, "kill.db"), filepath.Join(dir, "effects.log")
	returned := map[string]int{} // the first round in which an effect's Step returned
	kills := 0
	for round := 0; ; round++ {
		if round > 60 {
			t.Fatalf("no child finished the thread in %d rounds", round)
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), envNextDB+"="+db, envNextEffects+"="+effectsPath, fmt.Sprintf("%s=%d", envNextRound, round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 1 + rand.IntN(4) // STEP lines
		done := false
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "STEP "):
				if name := strings.TrimPrefix(line, "STEP "); returned[name] == 0 {
					returned[name] = round + 1 // 0: not yet
				}
				if killAfter--; killAfter == 0 {
					// Kill a little later: mid-superstep, mid-commit or
					// while a checkpoint is kept.
					time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
					cmd.Process.Signal(syscall.SIGKILL)
					kills++
				}
			case strings.HasPrefix(line, "DONE "):
				done = true
				if line != "DONE done" {
					t.Fatalf("the child ended %q", line)
				}
			case strings.HasPrefix(line, "ERROR "):
				t.Fatalf("child: %s", line)
			}
		}
		cmd.Wait()
		if done {
			break
		}
	}
	raw, err := os.ReadFile(effectsPath)
	if err != nil {
		t.Fatal(err)
	}
	// An effect may run again when a kill came after it and before its
	// journal write (the stated gap), never in a round after the one in
	// which its Step returned.
	runs := map[string]int{}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	for _, line := range lines {
		var name string
		var round int
		if _, err := fmt.Sscan(line, &name, &round); err != nil {
			t.Fatalf("effects.log line %q: %v", line, err)
		}
		runs[name]++
		if r := returned[name]; r != 0 && round > r-1 {
			t.Errorf("effect %s ran in round %d, though its Step had returned in round %d, before a kill", name, round, r-1)
		}
	}
	again := 0
	for i := 0; i < nextWriteNodes; i += 2 {
		name := fmt.Sprintf("n%d", i)
		switch n := runs[name]; {
		case n == 0:
			t.Errorf("effect %s never ran", name)
		case n > 1:
			again++ // killed after the effect, before its journal was written
		}
	}
	s, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g, err := nextWriteGraph(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.Thread(s, "kill").State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for i := range nextWriteNodes {
		want = append(want, fmt.Sprintf("n%d", i))
	}
	for _, v := range st.State["log"].([]any) {
		got = append(got, v.(string))
	}
	if !slices.Equal(got, want) {
		t.Errorf("the thread's log %v, want every node once, in order", got)
	}
	t.Logf("%d kills; %d effects ran again after a kill between the effect and its journal write (the stated gap)", kills, again)
	if kills == 0 {
		t.Error("no child was killed")
	}
}
