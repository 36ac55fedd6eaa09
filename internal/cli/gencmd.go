package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ilmek-go/ilmek/gen"
	"github.com/ilmek-go/ilmek/spec"
	"golang.org/x/mod/modfile"
)

// Invocation is one gen or check command line, parsed by ParseGen: the one
// reading of ilmekgen's generation flags. The command runs it; the tests
// that replay golden cases and //go:generate lines (gen, conformance) run
// it in memory with Generate, so they generate exactly what the command
// writes.
type Invocation struct {
	// Dir is the directory the command runs in: relative paths (each
	// SPEC, -o, --bindings) are relative to it. "" is the working
	// directory.
	Dir string
	// CheckOnly is the check command: every check of gen, and no code.
	CheckOnly bool
	// Stale is --check: name the stale generated files instead of
	// writing them.
	Stale bool
	// Out is the absolute directory of the generated package (-o).
	Out string
	// Package is the name of the generated package: -p, or the name of
	// the directory Out.
	Package string
	// Bindings are the --bindings file, --type and --config, merged.
	Bindings gen.BindingSpec
	// LoadDir is the directory whose module resolves the Go types of
	// Bindings; "" is Dir.
	LoadDir string
	// Specs are the SPEC arguments, as given.
	Specs []string
	// Subgraphs are the --subgraph flags and the bindings file's
	// "subgraphs": the child documents the specs' subgraph nodes are
	// checked against, and the import paths of their generated packages.
	Subgraphs []subgraphFlag
}

// ParseGen parses the arguments of the gen command (of check, when
// checkOnly) as the command run in directory dir ("" for the working
// directory) reads them. It reads the --bindings file. Its errors are
// those the command reports with exit status 2, and -h or --help.
func ParseGen(dir string, args []string, checkOnly bool) (*Invocation, error) {
	name := "gen"
	if checkOnly {
		name = "check"
	}
	fs := newFlags(name)
	typeFlags := fs.StringArray("type", nil, "bind a channel's type: CHANNEL=GOTYPE (repeatable)")
	configFlags := fs.StringArray("config", nil, "bind a node type's config: NODETYPE=GOTYPE (repeatable)")
	bindingsFile := fs.String("bindings", "", `JSON file of bindings: {"channels": {...}, "configs": {...}, "subgraphs": {...}}`)
	subgraphFlags := fs.StringArray("subgraph", nil, "a child graph the spec's subgraph nodes name: NAME=SPEC[,IMPORTPATH] (repeatable); with IMPORTPATH its generated package is wired in")
	var out, pkg *string
	stale := new(bool)
	if checkOnly {
		// check writes nothing; where the package would go still decides
		// its import path and name, which the checks use.
		out = fs.StringP("out", "o", ".", "directory the package would be generated in (its import path is checked)")
		pkg = fs.StringP("package", "p", "", "name the package would have (default: the directory's name)")
	} else {
		out = fs.StringP("out", "o", ".", "directory of the generated package")
		pkg = fs.StringP("package", "p", "", "name of the generated package (default: the directory's name)")
		stale = fs.Bool("check", false, "exit 1 naming stale generated files instead of writing them")
	}
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	switch {
	case !checkOnly && fs.NArg() != 1:
		return nil, &usageError{"gen needs exactly one SPEC"}
	case checkOnly && fs.NArg() == 0:
		return nil, &usageError{"check needs at least one SPEC"}
	}
	inv := &Invocation{Dir: dir, CheckOnly: checkOnly, Stale: *stale, Package: *pkg, Specs: fs.Args()}
	var err error
	if inv.Subgraphs, err = parseSubgraphFlags(*subgraphFlags); err != nil {
		return nil, err
	}
	if inv.Bindings, err = inv.readBindings(*bindingsFile, *typeFlags, *configFlags); err != nil {
		return nil, err
	}
	if inv.Out, err = filepath.Abs(inv.path(*out)); err != nil {
		return nil, err
	}
	if inv.Package == "" {
		inv.Package = filepath.Base(inv.Out)
		if err := gen.CheckPackageName(inv.Package); err != nil {
			if !checkOnly {
				return nil, &usageError{fmt.Sprintf("cannot name the package after directory %s (%v); pass -p NAME", *out, err)}
			}
			inv.Package = "graph"
		}
	}
	return inv, nil
}

// path is p as the command in Dir opens it.
func (inv *Invocation) path(p string) string {
	if inv.Dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(inv.Dir, p)
}

// runGen is the gen command, and the check command when checkOnly.
func runGen(args []string, stderr io.Writer, checkOnly bool) error {
	inv, err := ParseGen("", args, checkOnly)
	if err != nil {
		return err
	}
	failed := false
	for _, specPath := range inv.Specs {
		if err := inv.genOne(specPath, stderr); err != nil {
			if !errors.Is(err, errReported) {
				fmt.Fprintf(stderr, "ilmekgen: %v\n", err)
			}
			failed = true
		}
	}
	if failed {
		return errReported
	}
	return nil
}

// genOne generates (or checks) one spec and writes its files, or with
// Stale names those that differ. Files are written (or compared) one at a
// time as the generator produces them, so a large document never has every
// file's text in memory at once.
func (inv *Invocation) genOne(specPath string, stderr io.Writer) error {
	if inv.CheckOnly {
		_, diags, err := inv.Generate(specPath)
		printDiags(stderr, diags)
		if err == nil && diags.HasErrors() {
			err = errReported
		}
		return err
	}
	var stale []string
	made := false
	diags, err := inv.GenerateEach(specPath, func(f gen.File) error {
		p := filepath.Join(inv.Out, f.Name)
		if inv.Stale {
			if old, err := os.ReadFile(p); err != nil || !bytes.Equal(old, f.Data) {
				stale = append(stale, displayPath(inv.relOrAbs(p)))
			}
			return nil
		}
		if !made {
			if err := os.MkdirAll(inv.Out, 0o755); err != nil {
				return err
			}
			made = true
		}
		_, err := writeIfChanged(p, f.Data)
		return err
	})
	printDiags(stderr, diags)
	switch {
	case err != nil:
		return err
	case diags.HasErrors():
		return errReported
	case len(stale) > 0:
		for _, n := range stale {
			fmt.Fprintf(stderr, "%s: stale; run go generate (or ilmekgen without --check)\n", n)
		}
		return errReported
	}
	return nil
}

// Generate decodes the spec at specPath and generates its package in
// memory, as the command does before it writes anything; with CheckOnly it
// runs every check and returns no files. The diagnostics are in the order
// the command prints them: the decoder's, the bindings', then the
// generator's, each group sorted; when any is an error there are no files.
// err is a file that cannot be read, named.
func (inv *Invocation) Generate(specPath string) ([]gen.File, spec.Diagnostics, error) {
	var files []gen.File
	diags, err := inv.GenerateEach(specPath, func(f gen.File) error {
		files = append(files, f)
		return nil
	})
	if err != nil || diags.HasErrors() {
		return nil, diags, err
	}
	return files, diags, nil
}

// GenerateEach is Generate handing each file to emit as soon as it is
// generated (gen.GenerateEach), without keeping it; err is also emit's.
func (inv *Invocation) GenerateEach(specPath string, emit func(gen.File) error) (spec.Diagnostics, error) {
	g, _, diags, err := decodeSpec(inv.path(specPath), specPath)
	if err != nil || diags.HasErrors() {
		return diags, err
	}
	more, err := inv.generateGraph(g, specPath, emit)
	return append(diags, more...), err
}

// GenerateGraph is Generate of g, a spec already decoded from specPath: it
// returns the diagnostics of the bindings and of the generator.
func (inv *Invocation) GenerateGraph(g *spec.Graph, specPath string) ([]gen.File, spec.Diagnostics, error) {
	var files []gen.File
	diags, err := inv.generateGraph(g, specPath, func(f gen.File) error {
		files = append(files, f)
		return nil
	})
	if err != nil || diags.HasErrors() {
		return nil, diags, err
	}
	return files, diags, nil
}

// generateGraph generates g, handing each file to emit; with CheckOnly it
// runs the checks and emits nothing.
func (inv *Invocation) generateGraph(g *spec.Graph, specPath string, emit func(gen.File) error) (spec.Diagnostics, error) {
	absSpec, err := filepath.Abs(inv.path(specPath))
	if err != nil {
		return nil, err
	}
	source, err := filepath.Rel(inv.Out, absSpec)
	if err != nil {
		source = filepath.Base(absSpec)
	}
	opts := gen.Options{Package: inv.Package, PkgPath: importPath(inv.Out), Source: filepath.ToSlash(source)}
	all, pkgs, err := inv.checkSubgraphs(g)
	if err != nil || all.HasErrors() {
		return all, err
	}
	opts.Subgraphs = pkgs
	if !gen.WithBuiltins(g, inv.Bindings).Empty() {
		loadDir := inv.LoadDir
		if loadDir == "" {
			loadDir = inv.Dir
		}
		b, diags := gen.LoadBindings(g, inv.Bindings, gen.LoadConfig{Dir: loadDir, OutPkgPath: opts.PkgPath})
		all = append(all, sortedDiags(diags)...)
		if diags.HasErrors() {
			return all, nil
		}
		opts.Bindings = b
	}
	if inv.CheckOnly {
		// Check runs every check of Generate but emits no code.
		return append(all, sortedDiags(gen.Check(g, opts))...), nil
	}
	diags, err := gen.GenerateEach(g, opts, emit)
	return append(all, sortedDiags(diags)...), err
}

// relOrAbs names p relative to the command's directory when it is inside
// it.
func (inv *Invocation) relOrAbs(p string) string {
	wd, err := filepath.Abs(inv.Dir)
	if inv.Dir == "" {
		wd, err = os.Getwd()
	}
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// readBindings merges the --bindings file with the --type and --config
// flags; a name bound twice is a usage error.
func (inv *Invocation) readBindings(file string, typeFlags, configFlags []string) (gen.BindingSpec, error) {
	bs := gen.BindingSpec{Channels: map[string]string{}, Configs: map[string]string{}}
	if file != "" {
		data, err := os.ReadFile(inv.path(file))
		if err != nil {
			return bs, err
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var fromFile bindingsFile
		if err := dec.Decode(&fromFile); err != nil {
			return bs, fmt.Errorf("%s: %v (want {\"channels\": {\"NAME\": \"GOTYPE\"}, \"configs\": {\"TYPE\": \"GOTYPE\"}, \"subgraphs\": {\"NAME\": {\"spec\": \"PATH\", \"package\": \"IMPORTPATH\"}}})", displayPath(file), err)
		}
		if err := inv.addSubgraphBindings(file, fromFile.Subgraphs); err != nil {
			return bs, err
		}
		for k, v := range fromFile.Channels {
			bs.Channels[k] = v
		}
		for k, v := range fromFile.Configs {
			bs.Configs[k] = v
		}
	}
	add := func(flag string, into map[string]string, values []string) error {
		for _, s := range values {
			name, typ, err := splitBinding(flag, s)
			if err != nil {
				return err
			}
			if prev, ok := into[name]; ok {
				return &usageError{fmt.Sprintf("--%s %s: %q is already bound to %s", flag, s, name, prev)}
			}
			into[name] = typ
		}
		return nil
	}
	if err := add("type", bs.Channels, typeFlags); err != nil {
		return bs, err
	}
	if err := add("config", bs.Configs, configFlags); err != nil {
		return bs, err
	}
	return bs, nil
}

// importPath derives the import path of dir from the go.mod above it, or
// returns "" when there is none.
func importPath(dir string) string {
	for d := dir; ; {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			mod := modfile.ModulePath(data)
			if mod == "" {
				return ""
			}
			rel, err := filepath.Rel(d, dir)
			if err != nil {
				return ""
			}
			if rel == "." {
				return mod
			}
			return path.Join(mod, filepath.ToSlash(rel))
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}
