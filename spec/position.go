package spec

import (
	"bytes"
	"sort"
	"sync"
)

// source is what a decoded Graph remembers of its document, so that Pos can
// say where any JSON path was. It is never changed after Decode returns, so
// clones share it.
type source struct {
	file string
	data []byte         // a copy of the document
	offs map[string]int // value offset of every path the decoder visited outside raw JSON
	keys map[string]int // key offset of every unknown member, for warnings

	linesOnce sync.Once
	lines     []int // offset of the start of every line
}

func newSource(file string, data []byte) *source {
	return &source{file: file, data: bytes.Clone(data), offs: make(map[string]int), keys: make(map[string]int)}
}

// Pos returns where the value at the JSON path (nodes[3].type,
// channels.intent.reducer, edges[2].when.eq, nodes[0].config.tools[1]; see
// PathKey and PathIndex) starts in the decoded document. It returns the zero
// Pos for a graph built in Go, and for a path the document does not hold.
// Positions describe the document as decoded: a graph changed since is not
// re-measured.
func (g *Graph) Pos(path string) Pos {
	if g == nil || g.src == nil {
		return Pos{}
	}
	off, ok := g.src.find(path)
	if !ok {
		return Pos{}
	}
	return g.src.pos(off)
}

// pos turns a byte offset into a Pos.
func (s *source) pos(off int) Pos {
	s.linesOnce.Do(func() {
		s.lines = []int{0}
		for i := 0; ; {
			j := bytes.IndexByte(s.data[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			s.lines = append(s.lines, i)
		}
	})
	line := sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off }) - 1
	if line < 0 {
		line = 0
	}
	return Pos{File: s.file, Offset: off, Line: line + 1, Col: off - s.lines[line] + 1}
}

// find returns the offset of the value at path: recorded by the decoder, or
// found by reading the document from the nearest recorded ancestor (which is
// how paths inside config and unknown members are answered).
func (s *source) find(path string) (int, bool) {
	if off, ok := s.offs[path]; ok {
		return off, true
	}
	segs, ends, ok := parsePath(path)
	if !ok {
		return 0, false
	}
	for k := len(segs) - 1; k >= 0; k-- {
		prefix := ""
		if k > 0 {
			prefix = path[:ends[k-1]]
		}
		if off, ok := s.offs[prefix]; ok {
			return s.walk(off, segs[k:])
		}
	}
	return 0, false
}

// near returns the offset of path, or of its nearest ancestor the document
// holds; -1 when there is none.
func (s *source) near(path string) int {
	if off, ok := s.keys[path]; ok {
		return off
	}
	if off, ok := s.find(path); ok {
		return off
	}
	segs, ends, ok := parsePath(path)
	if !ok {
		return -1
	}
	for k := len(segs) - 1; k >= 1; k-- {
		if off, ok := s.find(path[:ends[k-1]]); ok {
			return off
		}
	}
	if off, ok := s.offs[""]; ok {
		return off
	}
	return -1
}

// walk follows segs from the value at off through the document text.
func (s *source) walk(off int, segs []seg) (int, bool) {
	p := newParser(s.data, hardMaxDepth)
	p.onDup = func(dupKey) {} // the first occurrence is the one decoded
	p.pos = off
	for _, sg := range segs {
		found := -1
		switch p.peek() {
		case kindObject:
			if !sg.isKey {
				return 0, false
			}
			p.object(func(key string, _ int) {
				if found < 0 && sg.matches(key) {
					found = p.pos
				}
				p.skip()
			})
		case kindArray:
			if sg.isKey {
				return 0, false
			}
			p.array(func(i int) {
				if i == sg.index {
					found = p.pos
				}
				p.skip()
			})
		default:
			return 0, false
		}
		if p.failed() || found < 0 {
			return 0, false
		}
		p.pos = found
		p.depth = 0
	}
	p.ws()
	return p.pos, true
}
