package gen

import (
	"bytes"
	"strconv"

	"github.com/dave/jennifer/jen"
)

// A table is a run of generated lines, one group per node, whose layout
// does not depend on its neighbours: a constant per node, a node id per
// line, a case per node id. Its emitter writes the text directly, already
// as gofmt lays it out (relative to the table's indentation), and puts a
// placeholder comment in the jennifer tree; render splices the text in at
// the placeholder's indentation after formatting the rest. For a document
// of many nodes this keeps the per-node lines out of jennifer's tree and
// out of go/format's parse and print, which otherwise take most of the
// generator's time and memory.
type table struct {
	bytes.Buffer
	placeholder string // the placeholder line, without its indentation
}

// Where a table's placeholder stands, which decides its form.
const (
	inBlock     = iota // among statements or case clauses: a comment
	inConst            // in a const block: a constant spec (a comment next to a spec's doc comment would be reformatted with it)
	inComposite        // among a composite literal's elements: an element (so gofmt still sees a literal that spans lines)
)

// table starts a table of the file being emitted and returns its
// placeholder, to be put where the lines go, and the buffer to write them
// into, one line per "\n" with its full indentation. No document can forge
// a placeholder: comments from a document always have a space after "//",
// and no generated identifier starts with "ilmekTable".
func (m *model) table(where int) (jen.Code, *table) {
	id := "ilmekTable" + strconv.Itoa(len(m.tables))
	t := &table{}
	var ph jen.Code
	switch where {
	case inConst:
		t.placeholder, ph = id+" = 0", jen.Id(id).Op("=").Lit(0)
	case inComposite:
		t.placeholder, ph = id+",", jen.Line().Id(id).Op(",").Line()
	default:
		// A directive's form, which gofmt leaves as it is.
		t.placeholder = "//ilmek:table " + strconv.Itoa(len(m.tables))
		ph = jen.Comment(t.placeholder)
	}
	m.tables = append(m.tables, t)
	return ph, t
}

// line writes one line of the table: indent tabs, then the parts.
func (t *table) line(indent int, parts ...string) {
	for range indent {
		t.WriteByte('\t')
	}
	for _, p := range parts {
		t.WriteString(p)
	}
	t.WriteByte('\n')
}

// spliceTables replaces each placeholder line of src with its table's
// lines and returns the result.
func spliceTables(src []byte, tables []*table) []byte {
	if len(tables) == 0 {
		return src
	}
	byLine := make(map[string]*table, len(tables))
	size := len(src)
	for _, t := range tables {
		byLine[t.placeholder] = t
		size += t.Len()
	}
	out := bytes.NewBuffer(make([]byte, 0, size))
	for len(src) > 0 {
		end := bytes.IndexByte(src, '\n') + 1
		if end == 0 {
			end = len(src)
		}
		line := src[:end]
		src = src[end:]
		if t := byLine[string(bytes.TrimSpace(line))]; t != nil {
			out.Write(t.Bytes())
			continue
		}
		out.Write(line)
	}
	return out.Bytes()
}

// mixed collects items in order, some written as table text and the others
// as jennifer code: each run of text items becomes one table.
type mixed struct {
	m     *model
	where int
	items []jen.Code
	cur   *table
}

// text returns the table the next text item goes into.
func (x *mixed) text() *table {
	if x.cur == nil {
		ph, t := x.m.table(x.where)
		x.items = append(x.items, ph)
		x.cur = t
	}
	return x.cur
}

// code adds an item as jennifer code.
func (x *mixed) code(c jen.Code) {
	x.items = append(x.items, c)
	x.cur = nil
}
