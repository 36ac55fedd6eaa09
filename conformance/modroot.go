package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"golang.org/x/mod/modfile"
)

// ModulePath is the import path of this module, which the generated kind's
// temporary module requires and replaces with the source directory.
const ModulePath = "github.com/ilmek-go/ilmek"

// FindModuleRoot returns the directory of this module's go.mod: the one
// above the source file this package was compiled from (when it still
// exists, as under go test and go run), else the first one above the
// current directory that declares module github.com/ilmek-go/ilmek.
func FindModuleRoot() (string, error) {
	var tried []string
	if _, file, _, ok := goruntime.Caller(0); ok && filepath.IsAbs(file) {
		if root, ok := moduleAbove(filepath.Dir(file)); ok {
			return root, nil
		}
		tried = append(tried, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		if root, ok := moduleAbove(wd); ok {
			return root, nil
		}
		tried = append(tried, wd)
	}
	// The generated kind builds a module that replaces this one with its
	// source, so it needs the source's directory.
	return "", fmt.Errorf("cannot find the source of module %s above %s; run from inside the repository or pass ilmek-conformance --module DIR", ModulePath, strings.Join(tried, " or "))
}

// CheckModuleRoot reports whether dir holds the go.mod of this module.
func CheckModuleRoot(dir string) error {
	path := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("module root %s: %w; name the directory that holds the go.mod of %s", dir, err, ModulePath)
	}
	if m := modulePathOf(data); m != ModulePath {
		return fmt.Errorf("module root %s: go.mod declares module %q, want %q; name the directory of this repository", dir, m, ModulePath)
	}
	return nil
}

// moduleAbove walks up from dir to the first go.mod of this module.
func moduleAbove(dir string) (string, bool) {
	for {
		if CheckModuleRoot(dir) == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// modulePathOf returns the path of go.mod's module line.
func modulePathOf(gomod []byte) string { return modfile.ModulePath(gomod) }

// goVersionOf returns the version of go.mod's go line ("" when absent or
// when go.mod does not parse).
func goVersionOf(gomod []byte) string {
	f, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil || f.Go == nil {
		return ""
	}
	return f.Go.Version
}
