// Command mkgraphs writes the benchmark graphs' spec documents
// (graphs/specs/*.json) and, for each, the glue that implements the
// generated package's Nodes with the workload's trivial bodies
// (graphs/<pkg>.go). ilmekgen then compiles each spec into graphs/<pkg>/;
// graphs/doc.go holds the //go:generate lines that run both. With -check
// it writes nothing and exits 1 when a file is stale.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"text/template"

	"github.com/ilmek-go/ilmek/bench/workload"
)

func main() {
	dir := flag.String("dir", ".", "the graphs directory")
	check := flag.Bool("check", false, "exit 1 naming stale files instead of writing them")
	flag.Parse()
	files, err := Files()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkgraphs:", err)
		os.Exit(1)
	}
	stale := false
	for _, f := range files {
		p := filepath.Join(*dir, f.Name)
		old, _ := os.ReadFile(p)
		if bytes.Equal(old, f.Data) {
			continue
		}
		if *check {
			fmt.Fprintf(os.Stderr, "%s: stale; run go generate ./graphs\n", p)
			stale = true
			continue
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "mkgraphs:", err)
			os.Exit(1)
		}
	}
	if stale {
		os.Exit(1)
	}
}

// File is one file mkgraphs writes, relative to the graphs directory.
type File struct {
	Name string
	Data []byte
}

// Graphs lists the workloads with a generated package: chain, fanout and
// loop at every committed size (their documents depend on N), fanoutsend
// once (its document does not).
func Graphs() []workload.Workload {
	var out []workload.Workload
	for _, kind := range []string{"chain", "fanout", "loop"} {
		for _, n := range workload.Sizes {
			out = append(out, workload.Workload{Kind: kind, N: n})
		}
	}
	return append(out, workload.Workload{Kind: "fanoutsend", N: 1})
}

// Package is the name of w's generated package: chain100, fanoutsend.
func Package(w workload.Workload) string {
	if w.Kind == "fanoutsend" {
		return w.Kind
	}
	return fmt.Sprintf("%s%d", w.Kind, w.N)
}

// Files returns every spec and glue file.
func Files() ([]File, error) {
	var out []File
	for _, w := range Graphs() {
		doc, err := w.SpecJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, File{Name: filepath.Join("specs", w.SpecName()+".json"), Data: doc})
		var b bytes.Buffer
		if err := glue.ExecuteTemplate(&b, w.Kind, map[string]any{"Pkg": Package(w), "Name": w.SpecName()}); err != nil {
			return nil, err
		}
		src, err := format.Source(b.Bytes())
		if err != nil {
			return nil, fmt.Errorf("glue of %s: %w\n%s", w, err, b.Bytes())
		}
		out = append(out, File{Name: Package(w) + ".go", Data: src})
	}
	return out, nil
}

var glue = template.Must(template.New("glue").Parse(glueText))
