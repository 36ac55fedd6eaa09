package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
)

// ProgramFunc runs one case through one generated package: it builds the
// package's graph from the test registry (through the package's
// FromRegistry adapter, with script steps counting into fx) and drives
// every run of c on a fresh thread of cp. The program the generated kind
// builds has one ProgramFunc per generated package.
type ProgramFunc func(ctx context.Context, c *Case, fx *Effects, cp runtime.Checkpointer) []Observation

// request is what the generated kind sends the generated program on its
// standard input.
type request struct {
	// Backend is the checkpointer to run against (one of BackendNames).
	Backend string `json:"backend"`
	// Timeout bounds each case; a case still running after it (and a grace
	// period) stops the program with every goroutine's stack on stderr.
	Timeout time.Duration `json:"timeout"`
	Cases   []requestCase `json:"cases"`
}

// requestCase is one case to run with the program of package Program; a
// case of several phases (Case.Phases) runs phase p with Programs[p].
type requestCase struct {
	Index    int      `json:"index"`
	Program  string   `json:"program"`
	Programs []string `json:"programs,omitempty"`
	File     string   `json:"file"`
	Case     *Case    `json:"case"`
}

// reply is one line the generated program writes to its standard output:
// the observations of the case at Index.
type reply struct {
	Index        int           `json:"index"`
	Observations []Observation `json:"observations"`
}

// ServeGenerated is the main function of the program the generated kind
// builds: it reads a request (backend and cases) as JSON from stdin, runs
// each case with its package's ProgramFunc, one after the other, and writes
// one JSON line of observations per case to stdout as soon as the case is
// done, so a crash loses only the case that crashed. It returns the exit
// status: 0, or 2 when the request cannot be served.
func ServeGenerated(programs map[string]ProgramFunc, stdin io.Reader, stdout, stderr io.Writer) int {
	if HelperRequested() {
		// Started again to make a run that kills its process (killRun).
		return ServeHelper(programs, stdin, stdout, stderr)
	}
	var req request
	if err := json.NewDecoder(stdin).Decode(&req); err != nil {
		fmt.Fprintf(stderr, "generated conformance program: reading the request on stdin: %v\n", err)
		return 2
	}
	backend, err := OpenBackend(req.Backend)
	if err != nil {
		fmt.Fprintf(stderr, "generated conformance program: %v\n", err)
		return 2
	}
	defer backend.Close()
	out := bufio.NewWriter(stdout)
	for _, rc := range req.Cases {
		if len(rc.Programs) == 0 {
			rc.Programs = []string{rc.Program}
		}
		var runs []ProgramFunc
		for _, name := range rc.Programs {
			run, ok := programs[name]
			if !ok {
				fmt.Fprintf(stderr, "generated conformance program: no package %q for case %s (the program was built for other cases)\n", name, rc.File)
				return 2
			}
			runs = append(runs, run)
		}
		rc.Case.File = rc.File
		obs := runWithWatchdog(rc, runs, backend, req.Timeout, stderr)
		line, err := json.Marshal(reply{Index: rc.Index, Observations: obs})
		if err != nil {
			fmt.Fprintf(stderr, "generated conformance program: encoding the observations of %s: %v\n", rc.File, err)
			return 2
		}
		out.Write(append(line, '\n'))
		if err := out.Flush(); err != nil {
			fmt.Fprintf(stderr, "generated conformance program: %v\n", err)
			return 2
		}
	}
	return 0
}

// runWithWatchdog runs one case with a deadline; if the case ignores the
// cancelled context for a grace period more (the timeout, at most five
// seconds), the process prints every goroutine's stack and exits 3, which
// the generated kind reports as that case's crash.
func runWithWatchdog(rc requestCase, runs []ProgramFunc, backend Backend, timeout time.Duration, stderr io.Writer) []Observation {
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
		grace := min(timeout, 5*time.Second)
		dog := time.AfterFunc(timeout+grace, func() {
			buf := make([]byte, 1<<20)
			n := goruntime.Stack(buf, true)
			fmt.Fprintf(stderr, "case %s still running %v after its deadline of %v; goroutines:\n%s\n", rc.File, grace, timeout, buf[:n])
			os.Exit(3)
		})
		defer dog.Stop()
	}
	cp := backend.New()
	defer closeCheckpointer(cp)
	fx := NewEffects()
	var out []Observation
	for p, run := range runs {
		obs := run(withProgram(ctx, rc.Programs[p]), rc.Case.AtPhase(p), fx, cp)
		out = append(out, obs...)
		if len(obs) == 1 && obs[0].Status == "invalid" {
			break
		}
	}
	return out
}
