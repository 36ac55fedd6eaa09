package runtime_test

import (
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docPackage reads the doc of the package in dir (its files but tests).
func docPackage(t *testing.T, dir, importPath string) *doc.Package {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, importPath)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	// bracketed is text in brackets that the doc parser left as text: a
	// doc link whose target does not exist (type arguments, as in Get[T]
	// and map[string]any, follow a name and are not links).
	bracketed = regexp.MustCompile(`(?:^|[^\w\]])(\[\*?[A-Za-z_][\w.]*\])`)
	// goName is a word that can only be a Go name: a member (Graph.Invoke)
	// or a mixed-case word (FromSpec, WithRecursionLimit).
	goName = regexp.MustCompile(`\b(?:[A-Z]\w*\.[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)\b`)
	// subPackage is a package of this module named by its path.
	subPackage = regexp.MustCompile(`\bruntime/[a-z][a-z/]*[a-z]\b`)
	// qualified is a name of this package in a code block.
	qualified = regexp.MustCompile(`\bruntime\.([A-Z]\w*(?:\.[A-Z]\w*)?)`)
)

// notGoNames are the words goName matches that are not Go names (the
// names of runtime/checkpointtest's contract cases among them).
var notGoNames = map[string]bool{"OpenTelemetry": true, "PostgreSQL": true,
	"ForkFromPauseReplaysStep": true, "ForkBeforeStepRunsIt": true, "ForkFromFailedStepReplaysStep": true}

// testDeclared reports whether name is a test function of runtime or of a
// package under it (the manual names the tests that show a guarantee).
func testDeclared(t *testing.T, name string) bool {
	if !strings.HasPrefix(name, "Test") {
		return false
	}
	found := false
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || found || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		found = err == nil && strings.Contains(string(b), "func "+name+"(t *testing.T)")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestPackageDocNamesExist reads the package doc (doc.go, the user's
// manual) and checks that every name of the package it mentions exists: its
// doc links resolve, every other word that can only be a Go name is a name
// of this package or of spec, and every runtime/... package it names is a
// directory. A renamed or removed name fails here, not in a reader's hands.
func TestPackageDocNamesExist(t *testing.T) {
	p := docPackage(t, ".", "github.com/ilmek-go/ilmek/runtime")
	others := map[string]*doc.Package{
		"spec":       docPackage(t, "../spec", "github.com/ilmek-go/ilmek/spec"),
		"checkpoint": docPackage(t, "./checkpoint", "github.com/ilmek-go/ilmek/runtime/checkpoint"),
	}
	parser := p.Parser()
	exists := func(name string) bool {
		recv, sym, ok := strings.Cut(name, ".")
		if !ok {
			recv, sym = "", name
		}
		if parser.LookupSym(recv, sym) {
			return true
		}
		if o, ok := others[recv]; ok && sym != "" {
			return o.Parser().LookupSym("", sym) || strings.Contains(sym, ".") && func() bool {
				r, s, _ := strings.Cut(sym, ".")
				return o.Parser().LookupSym(r, s)
			}()
		}
		return false
	}
	d := parser.Parse(p.Doc)
	var links int
	checkText := func(text string) {
		for _, m := range bracketed.FindAllStringSubmatch(text, -1) {
			t.Errorf("doc link %s does not resolve", m[1])
		}
		for _, m := range goName.FindAllString(text, -1) {
			if !notGoNames[m] && !exists(m) && !testDeclared(t, m) {
				t.Errorf("the doc names %s, which the package does not declare", m)
			}
		}
		for _, m := range subPackage.FindAllString(text, -1) {
			if fi, err := os.Stat(filepath.Join("..", m)); err != nil || !fi.IsDir() {
				t.Errorf("the doc names package %s, which does not exist", m)
			}
		}
	}
	var walk func(texts []comment.Text)
	walk = func(texts []comment.Text) {
		for _, x := range texts {
			switch x := x.(type) {
			case comment.Plain:
				checkText(string(x))
			case comment.Italic:
				checkText(string(x))
			case *comment.DocLink:
				links++
				if x.ImportPath != "" {
					if o, ok := others[filepath.Base(x.ImportPath)]; ok && !o.Parser().LookupSym(x.Recv, x.Name) {
						t.Errorf("doc link to %s.%s does not resolve", x.ImportPath, x.Name)
					}
				}
			case *comment.Link:
				walk(x.Text)
			}
		}
	}
	for _, b := range d.Content {
		switch b := b.(type) {
		case *comment.Heading:
			walk(b.Text)
		case *comment.Paragraph:
			walk(b.Text)
		case *comment.List:
			for _, it := range b.Items {
				for _, c := range it.Content {
					if para, ok := c.(*comment.Paragraph); ok {
						walk(para.Text)
					}
				}
			}
		case *comment.Code:
			for _, m := range qualified.FindAllStringSubmatch(b.Text, -1) {
				if !exists(m[1]) {
					t.Errorf("the doc's code names runtime.%s, which the package does not declare", m[1])
				}
			}
			for _, m := range subPackage.FindAllString(b.Text, -1) {
				if fi, err := os.Stat(filepath.Join("..", m)); err != nil || !fi.IsDir() {
					t.Errorf("the doc's code names package %s, which does not exist", m)
				}
			}
		}
	}
	if links == 0 {
		t.Error("the package doc has no doc links: is it parsed?")
	}
}
