package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
)

// The environment of a run made by a process of its own (Run.Kill).
const (
	// EnvHelper, when set, makes a process that calls ServeHelper (the
	// test binary's TestMain, ilmek-conformance, a generated program) make
	// one run of a case read from its standard input instead.
	EnvHelper = "ILMEK_CONFORMANCE_HELPER"
	// EnvKill names the "kill" script op that kills its own process.
	EnvKill = "ILMEK_CONFORMANCE_KILL"
	// EnvLedger is the file each real execution of a script step is
	// appended to, one step key a line, so that the counts outlive the
	// process.
	EnvLedger = "ILMEK_CONFORMANCE_LEDGER"
)

// helperLeaseTTL is the lease a killed process holds on the thread: the
// run after it waits it out.
const helperLeaseTTL = 2 * time.Second

// programKey carries the name of the program Drive runs (in context): "spec",
// "code" or a generated package's name, which a helper process builds again.
type programKey struct{}

// withProgram returns ctx naming the program that drives the case.
func withProgram(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, programKey{}, name)
}

// helperRequest is what killRun sends the helper process.
type helperRequest struct {
	Program string `json:"program"`
	Backend string `json:"backend"`
	Store   string `json:"store"`
	Case    *Case  `json:"case"`
	File    string `json:"file"`
}

// locatedStore is a checkpointer another process can open too: a backend's
// sqlite file or PostgreSQL schema.
type locatedStore interface {
	location() (backend, store string)
}

// killRun makes runs[i] of c in a process of its own (the running program
// started again with EnvHelper), in which the script op named by the run's
// kill sends SIGKILL to its own process. Script steps executed there are
// counted into fx through a ledger file. The observation is status
// "killed" when the process died of SIGKILL, else what the process
// observed.
func killRun(ctx context.Context, c *Case, i int, cp runtime.Checkpointer, fx *Effects) Observation {
	fail := func(format string, args ...any) Observation {
		return Observation{Status: "error", ErrorKind: "kill", Error: fmt.Sprintf("runs[%d] (kill %q): ", i, c.Runs[i].Kill) + fmt.Sprintf(format, args...), Steps: [][]string{}, Effects: fx.Snapshot()}
	}
	ls, ok := cp.(locatedStore)
	if !ok {
		return fail("the backend's store does not outlive its process (only sqlite and postgres do)")
	}
	prog, _ := ctx.Value(programKey{}).(string)
	if prog == "" {
		return fail("no program is named in the context (withProgram), so no process can build it again")
	}
	backend, store := ls.location()
	hc := *c.AtPhase(c.phase) // a copy: c is not changed
	hc.phase = 0
	r := c.Runs[i]
	r.Kill, r.Subgraphs, r.Expect = "", nil, Expect{}
	hc.Runs = []Run{r}
	req, err := json.Marshal(helperRequest{Program: prog, Backend: backend, Store: store, Case: &hc, File: c.File})
	if err != nil {
		return fail("%v", err)
	}
	dir, err := os.MkdirTemp("", "ilmek-conformance-kill-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(dir)
	ledger := filepath.Join(dir, "ledger")
	exe, err := os.Executable()
	if err != nil {
		return fail("find the running program to start it again: %v", err)
	}
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), EnvHelper+"=1", EnvKill+"="+c.Runs[i].Kill, EnvLedger+"="+ledger)
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if err := fx.addLedger(ledger); err != nil {
		return fail("%v", err)
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return Observation{Status: StatusKilled, Steps: [][]string{}, Effects: fx.Snapshot()}
		}
	}
	var o Observation
	if err := json.Unmarshal(stdout.Bytes(), &o); err != nil {
		return fail("the process was not killed and reported nothing (%v); its stderr:\n%s", runErr, tail(stderr.String(), 4000))
	}
	o.Effects = fx.Snapshot()
	return o
}

// addLedger counts every step key of the ledger file at path (absent: none).
func (e *Effects) addLedger(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, key := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if key != "" {
			e.Count(key)
		}
	}
	return nil
}

// HelperRequested reports whether the process was started to make one run
// of a case (EnvHelper): its main, or TestMain, calls ServeHelper then.
func HelperRequested() bool { return os.Getenv(EnvHelper) != "" }

// ServeHelper makes the one run of the case read from stdin, as killRun
// asks: it opens the store the parent named (with a short lease, which the
// parent waits out after the kill), builds the program again ("spec",
// "code", or programs[name] of a generated program), counts script steps
// into the ledger (EnvLedger) and runs it, with the kill op armed
// (EnvKill). When the process is not killed, it writes the observation to
// stdout as JSON. It returns the exit status.
func ServeHelper(programs map[string]ProgramFunc, stdin io.Reader, stdout, stderr io.Writer) int {
	var req helperRequest
	if err := json.NewDecoder(stdin).Decode(&req); err != nil {
		fmt.Fprintf(stderr, "conformance helper: reading the request on stdin: %v\n", err)
		return 2
	}
	prog := programs[req.Program]
	switch req.Program {
	case "spec":
		prog = specProgram
	case "code":
		prog = codeProgram
	}
	if prog == nil {
		fmt.Fprintf(stderr, "conformance helper: no program %q\n", req.Program)
		return 2
	}
	cp, closeCP, err := openLocated(req.Backend, req.Store)
	if err != nil {
		fmt.Fprintf(stderr, "conformance helper: %v\n", err)
		return 2
	}
	defer closeCP()
	fx, err := ledgerEffects(os.Getenv(EnvLedger))
	if err != nil {
		fmt.Fprintf(stderr, "conformance helper: %v\n", err)
		return 2
	}
	req.Case.File = req.File
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obs := prog(withProgram(ctx, req.Program), req.Case, fx, cp)
	if len(obs) != 1 {
		fmt.Fprintf(stderr, "conformance helper: %d observations for one run\n", len(obs))
		return 2
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	if err := json.NewEncoder(w).Encode(obs[0]); err != nil {
		fmt.Fprintf(stderr, "conformance helper: %v\n", err)
		return 2
	}
	return 0
}

// ledgerEffects returns a counter that also appends each count's key to
// the file at path (none when path is empty).
func ledgerEffects(path string) (*Effects, error) {
	fx := NewEffects()
	if path == "" {
		return fx, nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the ledger: %w", err)
	}
	fx.ledger = f
	return fx, nil
}

// killSelf is the "kill" script op: when name is the op EnvKill arms, the
// process sends itself SIGKILL; otherwise it does nothing.
func killSelf(name string) {
	if name == "" || os.Getenv(EnvKill) != name {
		return
	}
	p, err := os.FindProcess(os.Getpid())
	if err == nil {
		_ = p.Signal(syscall.SIGKILL)
	}
	time.Sleep(time.Minute) // the signal arrives first
}
