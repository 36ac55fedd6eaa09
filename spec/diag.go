package spec

import (
	"fmt"
	"strings"
)

// Pos is a place in a document: the file name, the byte offset and the
// 1-based line and column (in bytes) that offset falls on.
type Pos struct {
	File   string
	Offset int
	Line   int
	Col    int
}

// String formats p as file:line:col, leaving out what is unknown.
func (p Pos) String() string {
	file := p.File
	if file == "" {
		file = "<spec>"
	}
	if p.Line == 0 {
		return file
	}
	return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Col)
}

// Severity says whether a diagnostic refuses the document (Error) or only
// points at something worth a look (Warning).
type Severity uint8

// The two severities.
const (
	SeverityError Severity = iota
	SeverityWarning
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == SeverityWarning {
		return "warning"
	}
	return "error"
}

// Diagnostic is one problem found in a document: where it is (position and
// JSON path such as edges[2].when.eq), what is wrong and how to fix it.
type Diagnostic struct {
	Severity Severity
	Pos      Pos
	Path     string
	Message  string
	Hint     string
}

// String formats d as "file:line:col: path: message; hint", with "warning: "
// before the message for warnings.
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.Pos.String())
	b.WriteString(": ")
	if d.Path != "" {
		b.WriteString(d.Path)
		b.WriteString(": ")
	}
	if d.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	b.WriteString(d.Message)
	if d.Hint != "" {
		b.WriteString("; ")
		b.WriteString(d.Hint)
	}
	return b.String()
}

// Diagnostics is every problem found in one document, in document order.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Errors returns only the error diagnostics.
func (ds Diagnostics) Errors() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == SeverityError {
			out = append(out, d)
		}
	}
	return out
}

// Err returns an *Error holding the error diagnostics, or nil when there are
// none (warnings alone do not make an error).
func (ds Diagnostics) Err() error {
	errs := ds.Errors()
	if len(errs) == 0 {
		return nil
	}
	return &Error{Diagnostics: errs}
}

// Error is a refused document: every error diagnostic found in it.
type Error struct {
	Diagnostics Diagnostics
}

// Error joins the diagnostics one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}
