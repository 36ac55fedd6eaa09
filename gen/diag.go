package gen

import (
	"fmt"
	"sort"

	"github.com/ilmek-go/ilmek/spec"
)

// diags collects the diagnostics of one generation, each placed in the
// document by its JSON path.
type diags struct {
	g    *spec.Graph
	list spec.Diagnostics
}

// errorf records an error at the JSON path; hint says how to fix it.
func (d *diags) errorf(path, hint, format string, args ...any) {
	d.list = append(d.list, spec.Diagnostic{
		Severity: spec.SeverityError,
		Pos:      d.pos(path),
		Path:     path,
		Message:  fmt.Sprintf(format, args...),
		Hint:     hint,
	})
}

// pos returns where path is in the document, or the document itself when
// the path has no position.
func (d *diags) pos(path string) spec.Pos {
	p := d.g.Pos(path)
	if p.Line == 0 {
		if root := d.g.Pos(""); root.Line != 0 && p.File == "" {
			return root
		}
	}
	return p
}

// at formats where the document element at path is, for a message that
// names two places: "file:line:col, path".
func (d *diags) at(path string) string {
	p := d.pos(path)
	if path == "" {
		return p.String()
	}
	return p.String() + ", " + path
}

// SortDiagnostics orders diagnostics by file, offset, path and message, the
// order ilmekgen prints them in.
func SortDiagnostics(ds spec.Diagnostics) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Pos.File != b.Pos.File {
			return a.Pos.File < b.Pos.File
		}
		if a.Pos.Offset != b.Pos.Offset {
			return a.Pos.Offset < b.Pos.Offset
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Message < b.Message
	})
}
