package checkpoint

import (
	"context"
	"slices"
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
		m.docs[fingerprint] = slices.Clone(doc)
	}
	return nil
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
