// Package cli is the ilmekgen command: its flags, files, output and exit
// statuses. cmd/ilmekgen's main is Run; the tests of gen and conformance
// parse the //go:generate lines and golden cases they replay with ParseGen,
// so the command's flags are read in one place.
package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ilmek-go/ilmek/gen"
	"github.com/ilmek-go/ilmek/internal/suggest"
	"github.com/ilmek-go/ilmek/spec"
)

// Exit statuses.
const (
	exitOK    = 0
	exitSpec  = 1 // spec or binding errors, stale files
	exitUsage = 2
)

const usageText = `ilmekgen compiles a stored ilmek graph spec into a typed Go package.

Usage:
  ilmekgen [gen] [flags] SPEC          generate the package (default command)
  ilmekgen check [flags] SPEC...       check specs and bindings, write nothing
  ilmekgen fmt [-w] [--check] SPEC...  print (or write) the canonical form
  ilmekgen mermaid [--direction D] [--types] SPEC
                                      print the graph as a Mermaid flowchart (MODEL.md §9.1)
  ilmekgen schema [--config T=GOTYPE]  print the JSON Schema of a spec, or of a bound config
  ilmekgen diff [--json] OLD NEW       the changes from OLD to NEW, safe or unsafe for threads
  ilmekgen version                     print the version

Use it from go:generate, next to the spec:

  //go:generate go tool ilmekgen -o supportgraph --type messages=[]string --type intent=string support.json

GOTYPE is a Go type with full import paths: string, float64,
[]example.com/chat.Message, *example.com/shop.Cart, map[string]example.com/x.Y.
An append channel binds the slice type it accumulates; a merge channel a
map with string keys.

Exit status: 0 ok, 1 spec or binding errors (or stale files with --check),
2 usage errors, 3 (diff) a change unsafe for paused or new threads.
`

// usageError is a wrong command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// Run is the whole ilmekgen command: it parses args (the command line
// without the program's name), does the work in the working directory,
// prints to stdout and stderr, and returns the exit status: 0 success, 1
// spec or binding errors (or stale files with --check), 2 usage errors, 3
// a change diff finds unsafe.
func Run(args []string, stdout, stderr io.Writer) int {
	cmd := "gen"
	if len(args) > 0 {
		switch {
		case slices.Contains(commands, args[0]):
			cmd, args = args[0], args[1:]
		case args[0] == "-h" || args[0] == "--help":
			cmd = "help" // the overview; "gen -h" is gen's own help
		}
	}
	var err error
	switch cmd {
	case "help":
		if len(args) == 0 || len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprint(stdout, usageText)
			return exitOK
		}
		// help CMD is CMD --help.
		if len(args) == 1 && slices.Contains(commands, args[0]) && args[0] != "help" {
			return Run([]string{args[0], "--help"}, stdout, stderr)
		}
		err = &usageError{fmt.Sprintf("help takes one command, not %q; %sthe commands are %s", strings.Join(args, " "), didYouMean(args[0], commands), strings.Join(commands, ", "))}
	case "version":
		fs := newFlags("version")
		if err = parse(fs, args); err != nil {
			break
		}
		if fs.NArg() > 0 {
			err = &usageError{"version takes no arguments"}
			break
		}
		fmt.Fprintf(stdout, "ilmekgen %s (generator version %d)\n", moduleVersion(), gen.Version)
		return exitOK
	case "gen":
		err = unknownCommand(args)
		if err == nil {
			err = runGen(args, stderr, false)
		}
	case "check":
		err = runGen(args, stderr, true)
	case "fmt":
		err = runFmt(args, stdout, stderr)
	case "mermaid":
		err = runMermaid(args, stdout, stderr)
	case "schema":
		err = runSchema(args, stdout, stderr)
	case "diff":
		err = runDiff(args, stdout, stderr)
	}
	var ue *usageError
	var he *helpError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &he) && he.fs.Name() != "":
		fmt.Fprint(stdout, subcommandHelp(he.fs))
		return exitOK
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprint(stdout, usageText)
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "ilmekgen: %v\nRun 'ilmekgen --help' for usage.\n", err)
		return exitUsage
	case errors.Is(err, errReported):
		return exitSpec
	case errors.Is(err, errUnsafe):
		return exitUnsafe
	}
	fmt.Fprintf(stderr, "ilmekgen: %v\n", err)
	return exitSpec
}

// commands are the subcommands, in the order the help lists them.
var commands = []string{"gen", "check", "fmt", "mermaid", "schema", "diff", "version", "help"}

// unknownCommand refuses a first argument that is no file but is close to
// a command's name ("checkk", "chek"), which gen would take for its SPEC.
func unknownCommand(args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return nil
	}
	if _, err := os.Stat(args[0]); err == nil {
		return nil
	}
	if c := suggest.Closest(args[0], commands); c != "" {
		return &usageError{fmt.Sprintf("unknown command %q; did you mean %q?", args[0], c)}
	}
	return nil
}

// didYouMean is `did you mean "x"? ` for the candidate closest to s, or "".
func didYouMean(s string, candidates []string) string { return suggest.DidYouMean(s, candidates) }

// errReported means the problems were already printed.
var errReported = errors.New("reported")

// moduleVersion is the version of the ilmek module ilmekgen was built from.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path == "github.com/ilmek-go/ilmek" && bi.Main.Version != "" {
			return bi.Main.Version
		}
		for _, d := range bi.Deps {
			if d.Path == "github.com/ilmek-go/ilmek" {
				return d.Version
			}
		}
	}
	return "(devel)"
}

// newFlags returns a flag set that reports errors as usage errors and
// prints nothing itself.
func newFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

// parse parses args, turning pflag's errors into usage errors; an
// unknown flag gets the nearest of fs's flags as a suggestion.
func parse(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return &helpError{fs}
		}
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
			var names []string
			fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
			if c := suggest.Closest(name, names); c != "" {
				msg += fmt.Sprintf("; did you mean --%s?", c)
			}
		}
		return &usageError{msg}
	}
	return nil
}

// loadSpec reads and decodes one spec, printing its diagnostics; the graph
// is nil when it has errors.
func loadSpec(path string, stderr io.Writer) (*spec.Graph, []byte, error) {
	g, data, diags, err := decodeSpec(path, path)
	printDiags(stderr, diags)
	if err == nil && diags.HasErrors() {
		return nil, data, errReported
	}
	return g, data, err
}

// decodeSpec reads the spec at file and decodes it, naming it path (as
// given on the command line) in its diagnostics, sorted; the graph is nil
// when they have errors.
func decodeSpec(file, path string) (*spec.Graph, []byte, spec.Diagnostics, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, nil, err
	}
	data, err := spec.ReadLimited(f)
	f.Close()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", displayPath(path), err)
	}
	g, diags := spec.Decode(displayPath(path), data)
	if diags.HasErrors() {
		g = nil
	}
	return g, data, sortedDiags(diags), nil
}

// displayPath is how a file is named in diagnostics: as given, with
// forward slashes.
func displayPath(path string) string { return filepath.ToSlash(filepath.Clean(path)) }

// sortedDiags is a sorted copy of ds.
func sortedDiags(ds spec.Diagnostics) spec.Diagnostics {
	ds = append(spec.Diagnostics(nil), ds...)
	gen.SortDiagnostics(ds)
	return ds
}

// printDiags prints every diagnostic, in order.
func printDiags(w io.Writer, ds spec.Diagnostics) {
	for _, d := range ds {
		fmt.Fprintln(w, d.String())
	}
}

func runFmt(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fmt")
	write := fs.BoolP("write", "w", false, "write the canonical form back to each file")
	check := fs.Bool("check", false, "exit 1 naming the files that are not canonical, and print the unified diff that -w would apply")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return &usageError{"fmt needs at least one SPEC"}
	}
	failed := false
	for _, path := range fs.Args() {
		g, data, err := loadSpec(path, stderr)
		if err != nil {
			if !errors.Is(err, errReported) {
				fmt.Fprintf(stderr, "ilmekgen: %v\n", err)
			}
			failed = true
			continue
		}
		out := g.Encode()
		switch {
		case *check:
			if !bytes.Equal(out, data) {
				fmt.Fprintf(stderr, "%s: not in canonical form; run ilmekgen fmt -w %s\n", displayPath(path), displayPath(path))
				name := displayPath(path)
				stdout.Write(unifiedDiff(name, data, name+" (canonical)", out))
				failed = true
			}
		case *write:
			if _, err := writeIfChanged(path, out); err != nil {
				fmt.Fprintf(stderr, "ilmekgen: %v\n", err)
				failed = true
			}
		default:
			stdout.Write(out)
		}
	}
	if failed {
		return errReported
	}
	return nil
}

// writeIfChanged writes data to path through a temporary file and a rename,
// only when the file does not already hold exactly data.
func writeIfChanged(path string, data []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return false, err
	}
	name := tmp.Name()
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, 0o644)
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return false, err
	}
	return true, nil
}

// splitBinding splits NAME=GOTYPE.
func splitBinding(flag, s string) (string, string, error) {
	name, typ, ok := strings.Cut(s, "=")
	if !ok || name == "" || typ == "" {
		return "", "", &usageError{fmt.Sprintf("--%s %q: want NAME=GOTYPE", flag, s)}
	}
	return name, typ, nil
}
