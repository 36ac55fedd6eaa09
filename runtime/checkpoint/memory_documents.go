package checkpoint

import (
	"bytes"
	"context"
	"slices"
	"sync"
)

var _ DocumentStore = (*Memory)(nil)

// PutDocument keeps a copy of doc under fingerprint.
func (m *Memory) PutDocument(_ context.Context, fingerprint string, doc []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.docs == nil {
		m.docs = map[string][]byte{}
	}
	if _, ok := m.docs[fingerprint]; !ok {
		m.docs[fingerprint] = sharedDocs.get(fingerprint, doc)
	}
	return nil
}

// sharedDocs are the documents the Memory values of the process stored,
// one copy each: a program that makes a Memory per run (a test, a
// benchmark) copies its graph's document once, not once a run. Stored
// documents are never written to (GetDocument returns copies).
var sharedDocs docCopies

// docCopies holds copies of documents by fingerprint, at most
// docCopiesMax of them.
type docCopies struct {
	mu   sync.Mutex
	byFP map[string][]byte
}

const docCopiesMax = 64

// get returns a copy of doc: the one already held when it has the same
// bytes, else a new one (held while there is room).
func (d *docCopies) get(fingerprint string, doc []byte) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.byFP[fingerprint]; ok && bytes.Equal(c, doc) {
		return c
	}
	c := slices.Clone(doc)
	if d.byFP == nil {
		d.byFP = map[string][]byte{}
	}
	if len(d.byFP) < docCopiesMax {
		d.byFP[fingerprint] = c
	}
	return c
}

// GetDocument returns a copy of the document stored under fingerprint.
func (m *Memory) GetDocument(_ context.Context, fingerprint string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.docs[fingerprint]
	if !ok {
		return nil, ErrNotFound
	}
	return slices.Clone(d), nil
}
