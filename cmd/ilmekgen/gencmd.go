package main

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
	"golang.org/x/mod/modfile"
)

// runGen is the gen command, and the check command when checkOnly.
func runGen(args []string, stdout, stderr io.Writer, checkOnly bool) error {
	name := "gen"
	if checkOnly {
		name = "check"
	}
	fs := newFlags(name)
	out := fs.StringP("out", "o", ".", "directory of the generated package")
	pkg := fs.StringP("package", "p", "", "name of the generated package (default: the directory's name)")
	typeFlags := fs.StringArray("type", nil, "bind a channel's type: CHANNEL=GOTYPE (repeatable)")
	configFlags := fs.StringArray("config", nil, "bind a node type's config: NODETYPE=GOTYPE (repeatable)")
	bindingsFile := fs.String("bindings", "", `JSON file of bindings: {"channels": {...}, "configs": {...}}`)
	stale := fs.Bool("check", false, "exit 1 naming stale generated files instead of writing them")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case !checkOnly && fs.NArg() != 1:
		return &usageError{"gen needs exactly one SPEC"}
	case checkOnly && fs.NArg() == 0:
		return &usageError{"check needs at least one SPEC"}
	}
	bs, err := readBindings(*bindingsFile, *typeFlags, *configFlags)
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	pkgName := *pkg
	if pkgName == "" {
		pkgName = filepath.Base(absOut)
		if err := gen.CheckPackageName(pkgName); err != nil {
			if !checkOnly {
				return &usageError{fmt.Sprintf("cannot name the package after directory %s (%v); pass -p NAME", *out, err)}
			}
			pkgName = "graph"
		}
	}
	failed := false
	for _, specPath := range fs.Args() {
		if err := genOne(specPath, absOut, pkgName, bs, checkOnly, *stale, stdout, stderr); err != nil {
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

// genOne generates (or checks) one spec.
func genOne(specPath, absOut, pkgName string, bs gen.BindingSpec, checkOnly, stale bool, stdout, stderr io.Writer) error {
	g, _, err := loadSpec(specPath, stderr)
	if err != nil {
		return err
	}
	absSpec, err := filepath.Abs(specPath)
	if err != nil {
		return err
	}
	source, err := filepath.Rel(absOut, absSpec)
	if err != nil {
		source = filepath.Base(absSpec)
	}
	opts := gen.Options{Package: pkgName, PkgPath: importPath(absOut), Source: filepath.ToSlash(source)}
	if !bs.Empty() {
		b, diags := gen.LoadBindings(g, bs, gen.LoadConfig{OutPkgPath: opts.PkgPath})
		printDiags(stderr, diags)
		if diags.HasErrors() {
			return errReported
		}
		opts.Bindings = b
	}
	if checkOnly {
		// Check runs every check of Generate but emits no code.
		diags := gen.Check(g, opts)
		printDiags(stderr, diags)
		if diags.HasErrors() {
			return errReported
		}
		return nil
	}
	files, diags := gen.Generate(g, opts)
	printDiags(stderr, diags)
	if diags.HasErrors() {
		return errReported
	}
	if stale {
		var names []string
		for _, f := range files {
			p := filepath.Join(absOut, f.Name)
			if old, err := os.ReadFile(p); err != nil || !bytes.Equal(old, f.Data) {
				names = append(names, displayPath(relOrAbs(p)))
			}
		}
		if len(names) > 0 {
			for _, n := range names {
				fmt.Fprintf(stderr, "%s: stale; run go generate (or ilmekgen without --check)\n", n)
			}
			return errReported
		}
		return nil
	}
	if err := os.MkdirAll(absOut, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if _, err := writeIfChanged(filepath.Join(absOut, f.Name), f.Data); err != nil {
			return err
		}
	}
	return nil
}

// relOrAbs names p relative to the working directory when it is inside it.
func relOrAbs(p string) string {
	wd, err := os.Getwd()
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
func readBindings(file string, typeFlags, configFlags []string) (gen.BindingSpec, error) {
	bs := gen.BindingSpec{Channels: map[string]string{}, Configs: map[string]string{}}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return bs, err
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var fromFile gen.BindingSpec
		if err := dec.Decode(&fromFile); err != nil {
			return bs, fmt.Errorf("%s: %v (want {\"channels\": {\"NAME\": \"GOTYPE\"}, \"configs\": {\"TYPE\": \"GOTYPE\"}})", displayPath(file), err)
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
