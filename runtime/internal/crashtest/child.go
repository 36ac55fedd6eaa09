package crashtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// The environment through which a parent tells a child what to do.
const (
	envMode   = "ILMEK_CRASHTEST_MODE" // hold, crash or recover
	envDB     = "ILMEK_CRASHTEST_DB"
	envThread = "ILMEK_CRASHTEST_THREAD"
	envKind   = "ILMEK_CRASHTEST_KIND"
	envDir    = "ILMEK_CRASHTEST_DIR"
)

// Modes of a child process.
const (
	// ModeHold takes the thread's lease, prints LeasedLine, and holds the
	// lease until its standard input is closed; then it releases and exits.
	ModeHold = "hold"
	// ModeCrash runs the thread with the kind's tasks in PhaseCrash; it
	// never ends by itself: the parent kills it.
	ModeCrash = "crash"
	// ModeRecover runs the thread with the kind's tasks in PhaseRecover,
	// retrying while the thread's lease is busy, and prints a Report.
	ModeRecover = "recover"
)

// LeasedLine is what a ModeHold child prints once it holds the lease.
const LeasedLine = "LEASED"

// OpenFunc opens the durable checkpointer on the file at path; close closes
// it.
type OpenFunc func(path string) (cp runtime.Checkpointer, close func() error, err error)

// Report is the last line a ModeRecover child prints, as JSON.
type Report struct {
	Status runtime.Status `json:"status"`
	Err    string         `json:"err,omitempty"`
	// Busy counts the attempts refused with ErrThreadBusy before the run
	// started (the lease of the killed process had not expired yet).
	Busy int `json:"busy"`
}

// Main runs the child when the process was started as one by Start, and
// then exits; otherwise it returns at once. Call it first in TestMain with
// the same open function and kinds the tests use.
func Main(open OpenFunc, kinds ...Kind) {
	mode := os.Getenv(envMode)
	if mode == "" {
		return
	}
	if err := child(mode, open, kinds); err != nil {
		fmt.Fprintf(os.Stderr, "crashtest child (%s): %v\n", mode, err)
		os.Exit(2)
	}
	os.Exit(0)
}

func child(mode string, open OpenFunc, kinds []Kind) error {
	ctx := context.Background()
	thread := os.Getenv(envThread)
	cp, closeCP, err := open(os.Getenv(envDB))
	if err != nil {
		return err
	}
	defer closeCP()
	switch mode {
	case ModeHold:
		release, err := leaseFunc(cp.Lease(ctx, thread, checkpoint.LeaseOptions{}))
		if err != nil {
			return err
		}
		fmt.Println(LeasedLine)
		io.Copy(io.Discard, os.Stdin) // until the parent closes it
		release()
		return nil
	case ModeCrash, ModeRecover:
	default:
		return fmt.Errorf("unknown mode %q (want %s, %s or %s)", mode, ModeHold, ModeCrash, ModeRecover)
	}
	var kind *Kind
	for i := range kinds {
		if kinds[i].Name == os.Getenv(envKind) {
			kind = &kinds[i]
		}
	}
	if kind == nil {
		return fmt.Errorf("unknown kind %q: pass it to crashtest.Main in TestMain", os.Getenv(envKind))
	}
	fx := &Effects{Dir: os.Getenv(envDir), Phase: PhaseCrash, Block: time.Minute}
	if mode == ModeRecover {
		fx.Phase = PhaseRecover
	}
	run, err := kind.Build(fx)
	if err != nil {
		return fmt.Errorf("build %s graph: %w", kind.Name, err)
	}
	var rep Report
	deadline := time.Now().Add(time.Minute)
	for {
		rep.Status, err = run(ctx, cp, thread)
		if !errors.Is(err, runtime.ErrThreadBusy) || time.Now().After(deadline) {
			break
		}
		rep.Busy++
		time.Sleep(20 * time.Millisecond)
	}
	if mode == ModeCrash {
		return fmt.Errorf("the crash run ended (%s, %v) instead of blocking until killed", rep.Status, err)
	}
	if err != nil {
		rep.Err = err.Error()
	}
	line, _ := json.Marshal(rep)
	fmt.Println(string(line))
	return nil
}

// leaseFunc adapts a Lease to the func() its callers release it with.
func leaseFunc(l checkpoint.Lease, err error) (func(), error) {
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}
