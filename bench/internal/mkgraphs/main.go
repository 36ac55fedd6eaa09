// Command mkgraphs writes the benchmark graphs' spec documents and, for
// each, the glue that implements the generated package's Nodes with the
// workload's trivial bodies.
//
// By default it writes the committed graphs — every kind at size 100 and
// fanoutsend — into graphs/specs/*.json and graphs/<pkg>.go; ilmekgen then
// compiles each spec into graphs/<pkg>/, and graphs/doc.go holds the
// //go:generate lines that run both. With -check it writes nothing and
// exits 1 when a file is stale.
//
// With -big it writes the graphs of the larger sizes (200, 1,000 and
// 2,000), which are generated when the benchmarks run and not committed:
// their specs and packages into the gitignored graphs/_big/, and the glue
// that imports them into graphs/big_<pkg>.go (gitignored, built only with
// -tags bigbench). It runs ilmekgen only for a package whose document,
// flags or generator changed since the package was last written (a hash of
// the three is kept in _big/<pkg>/.mkgraphs-hash), so a second run
// regenerates nothing.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/ilmek-go/ilmek/bench/workload"
)

func main() {
	dir := flag.String("dir", ".", "the graphs directory")
	check := flag.Bool("check", false, "exit 1 naming stale files instead of writing them")
	big := flag.Bool("big", false, "write the generated (not committed) sizes into DIR/_big and run ilmekgen where they changed")
	flag.Parse()
	if *big {
		if *check {
			fmt.Fprintln(os.Stderr, "mkgraphs: -big and -check do not go together: the -big graphs are not committed")
			os.Exit(2)
		}
		tool, err := ilmekgenPath(*dir)
		if err == nil {
			_, err = Big(*dir, Generated(), tool, os.Stderr)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mkgraphs:", err)
			os.Exit(1)
		}
		return
	}
	files, err := Files()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkgraphs:", err)
		os.Exit(1)
	}
	stale := false
	for _, f := range files {
		p := filepath.Join(*dir, f.Name)
		if *check {
			if old, _ := os.ReadFile(p); !bytes.Equal(old, f.Data) {
				fmt.Fprintf(os.Stderr, "%s: stale; run go generate ./graphs\n", p)
				stale = true
			}
			continue
		}
		if _, err := writeIfChanged(p, f.Data); err != nil {
			fmt.Fprintln(os.Stderr, "mkgraphs:", err)
			os.Exit(1)
		}
	}
	if stale {
		os.Exit(1)
	}
}

// BigDir is the directory, inside the graphs directory, of the packages
// that are generated when the benchmarks run. Its name starts with "_" so
// that ./... patterns (go build, go vet, go test) skip it; it is
// gitignored, as are the big_*.go glue files that import it.
const BigDir = "_big"

// bigImport is the import path of BigDir.
const bigImport = "github.com/ilmek-go/ilmek/bench/graphs/" + BigDir

// File is one file mkgraphs writes, relative to the directory it writes
// into.
type File struct {
	Name string
	Data []byte
}

// Graphs lists the workloads with a generated package: chain, fanout and
// loop at every size of workload.Sizes (their documents depend on N),
// fanoutsend once (its document does not).
func Graphs() []workload.Workload {
	var out []workload.Workload
	for _, kind := range []string{"chain", "fanout", "loop"} {
		for _, n := range workload.Sizes {
			out = append(out, workload.Workload{Kind: kind, N: n})
		}
	}
	return append(out, workload.Workload{Kind: "fanoutsend", N: 1})
}

// Committed reports whether w's generated package is committed: size 100
// and fanoutsend are, the larger sizes are generated when benchmarks run.
func Committed(w workload.Workload) bool { return w.Kind == "fanoutsend" || w.N == 100 }

// Generated lists the workloads of Graphs that are not committed.
func Generated() []workload.Workload {
	var out []workload.Workload
	for _, w := range Graphs() {
		if !Committed(w) {
			out = append(out, w)
		}
	}
	return out
}

// Package is the name of w's generated package: chain100, fanoutsend.
func Package(w workload.Workload) string {
	if w.Kind == "fanoutsend" {
		return w.Kind
	}
	return fmt.Sprintf("%s%d", w.Kind, w.N)
}

// Files returns every spec and glue file of the committed graphs, relative
// to the graphs directory, and the parent document of the subgraph
// benchmark (subchainFile; its glue, graphs/subchain.go, is written by
// hand).
func Files() ([]File, error) {
	var out []File
	for _, w := range Graphs() {
		if !Committed(w) {
			continue
		}
		fs, err := graphFiles(w, false)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	sub, err := subchainFile()
	if err != nil {
		return nil, err
	}
	return append(out, sub), nil
}

// graphFiles returns w's spec document and its glue, relative to the
// graphs directory: specs/<name>.json and <pkg>.go for a committed graph,
// _big/specs/<name>.json and big_<pkg>.go (built with -tags bigbench) for
// a generated one.
func graphFiles(w workload.Workload, big bool) ([]File, error) {
	doc, err := w.SpecJSON()
	if err != nil {
		return nil, err
	}
	imp, specDir, glueName := "github.com/ilmek-go/ilmek/bench/graphs/"+Package(w), "specs", Package(w)+".go"
	if big {
		imp, specDir, glueName = bigImport+"/"+Package(w), filepath.Join(BigDir, "specs"), "big_"+Package(w)+".go"
	}
	src, err := execute(w.Kind, map[string]any{"Pkg": Package(w), "Name": w.SpecName(), "Big": big, "Import": imp})
	if err != nil {
		return nil, fmt.Errorf("glue of %s: %w", w, err)
	}
	return []File{{Name: filepath.Join(specDir, w.SpecName()+".json"), Data: doc}, {Name: glueName, Data: src}}, nil
}

// execute runs one template of glueText and formats the result.
func execute(name string, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := glue.ExecuteTemplate(&b, name, data); err != nil {
		return nil, err
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, b.Bytes())
	}
	return src, nil
}

// Big writes the specs and glue of ws into the graphs directory dir
// (_big/specs/, big_<pkg>.go) and runs the ilmekgen binary at tool for
// each package whose cache key — the hash of its document, its ilmekgen
// flags and tool's path, which names the build of the generator — differs
// from the one kept in the package's directory. It returns the packages it
// regenerated and logs each to log.
func Big(dir string, ws []workload.Workload, tool string, log io.Writer) ([]string, error) {
	if err := os.MkdirAll(filepath.Join(dir, BigDir, "specs"), 0o755); err != nil {
		return nil, err
	}
	for _, w := range ws {
		files, err := graphFiles(w, true)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if _, err := writeIfChanged(filepath.Join(dir, f.Name), f.Data); err != nil {
				return nil, err
			}
		}
	}
	big := filepath.Join(dir, BigDir)
	var done []string
	for _, w := range ws {
		pkg := Package(w)
		args := []string{"gen", "-o", pkg, "--type", "items=[]int", "--type", "counter=int", filepath.Join("specs", w.SpecName()+".json")}
		doc, err := os.ReadFile(filepath.Join(big, args[len(args)-1]))
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%s\x00", tool, strings.Join(args, "\x00"))
		h.Write(doc)
		key := hex.EncodeToString(h.Sum(nil)) + "\n"
		keyFile := filepath.Join(big, pkg, ".mkgraphs-hash")
		if old, err := os.ReadFile(keyFile); err == nil && string(old) == key {
			continue
		}
		fmt.Fprintf(log, "mkgraphs: generating %s\n", filepath.Join(big, pkg))
		cmd := exec.Command(tool, args...)
		cmd.Dir = big
		if out, err := cmd.CombinedOutput(); err != nil {
			return done, fmt.Errorf("ilmekgen %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if err := os.WriteFile(keyFile, []byte(key), 0o644); err != nil {
			return done, err
		}
		done = append(done, pkg)
	}
	return done, nil
}

// ilmekgenPath builds the bench module's ilmekgen tool (go tool -n) and
// returns the path of its binary. The path lies in the build cache under
// the hash of the build, so it changes whenever the generator's source
// does.
func ilmekgenPath(dir string) (string, error) {
	cmd := exec.Command("go", "tool", "-n", "ilmekgen")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go tool -n ilmekgen: %v\n%s", err, stderr.Bytes())
	}
	path := strings.TrimSpace(string(out))
	if path == "" || strings.Contains(path, "\n") {
		return "", errors.New("go tool -n ilmekgen printed no single binary path")
	}
	return path, nil
}

// writeIfChanged writes data to p unless p already holds it, so that an
// unchanged file keeps its modification time.
func writeIfChanged(p string, data []byte) (bool, error) {
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	return true, os.WriteFile(p, data, 0o644)
}

var glue = template.Must(template.New("glue").Parse(glueText))
