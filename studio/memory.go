package studio

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Memory is a Repository in memory, for tests and a studio whose
// documents need not outlive the process.
type Memory struct {
	mu   sync.Mutex
	docs map[string]*memDoc
	now  func() time.Time
}

type memDoc struct {
	d    Document
	revs []Revision
	vers []Version
}

// NewMemory returns an empty in-memory Repository.
func NewMemory() *Memory {
	return &Memory{docs: map[string]*memDoc{}, now: time.Now}
}

func (m *Memory) byName(name string) *memDoc {
	for _, d := range m.docs {
		if d.d.Name == name {
			return d
		}
	}
	return nil
}

func (m *Memory) doc(id string) (*memDoc, error) {
	d, ok := m.docs[id]
	if !ok {
		return nil, fmt.Errorf("document %q: %w", id, ErrNotFound)
	}
	return d, nil
}

// Create implements Repository.
func (m *Memory) Create(_ context.Context, d Document, first Revision) (Document, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.docs[d.ID]; ok {
		return Document{}, fmt.Errorf("document id %q exists: %w", d.ID, ErrNameTaken)
	}
	if m.byName(d.Name) != nil {
		return Document{}, fmt.Errorf("document %q: %w", d.Name, ErrNameTaken)
	}
	now := m.now().UTC()
	if d.Created.IsZero() {
		d.Created = now
	}
	d.Updated, d.Revision, d.Published = d.Created, 1, 0
	first.Document, first.Number, first.Created = d.ID, 1, d.Created
	first.Body = slices.Clone(first.Body)
	m.docs[d.ID] = &memDoc{d: d, revs: []Revision{first}}
	return d, nil
}

// Get implements Repository.
func (m *Memory) Get(_ context.Context, id string) (Document, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.doc(id)
	if err != nil {
		return Document{}, err
	}
	return d.d, nil
}

// List implements Repository.
func (m *Memory) List(context.Context) ([]Document, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Document, 0, len(m.docs))
	for _, d := range m.docs {
		out = append(out, d.d)
	}
	slices.SortFunc(out, func(a, b Document) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Rename implements Repository.
func (m *Memory) Rename(_ context.Context, id, name string) (Document, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.doc(id)
	if err != nil {
		return Document{}, err
	}
	if o := m.byName(name); o != nil && o != d {
		return Document{}, fmt.Errorf("document %q: %w", name, ErrNameTaken)
	}
	d.d.Name, d.d.Updated = name, m.now().UTC()
	return d.d, nil
}

// Delete implements Repository.
func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.doc(id); err != nil {
		return err
	}
	delete(m.docs, id)
	return nil
}

// Save implements Repository.
func (m *Memory) Save(_ context.Context, base int, r Revision) (Revision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.doc(r.Document)
	if err != nil {
		return Revision{}, err
	}
	if base != d.d.Revision {
		return Revision{}, fmt.Errorf("document %q is at revision %d, not %d: %w", d.d.Name, d.d.Revision, base, ErrStale)
	}
	r.Number, r.Created, r.Body = base+1, m.now().UTC(), slices.Clone(r.Body)
	d.revs = append(d.revs, r)
	d.d.Revision, d.d.Updated = r.Number, r.Created
	return r, nil
}

// Revision implements Repository.
func (m *Memory) Revision(_ context.Context, id string, n int) (Revision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.doc(id)
	if err != nil {
		return Revision{}, err
	}
	if n < 1 || n > len(d.revs) {
		return Revision{}, fmt.Errorf("document %q revision %d: %w", d.d.Name, n, ErrNotFound)
	}
	r := d.revs[n-1]
	r.Body = slices.Clone(r.Body)
	return r, nil
}

// Revisions implements Repository.
func (m *Memory) Revisions(_ context.Context, id string) ([]Revision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.doc(id)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(d.revs)
	for i := range out {
		out[i].Body = nil
	}
	return out, nil
}

// Publish implements Repository.
func (m *Memory) Publish(_ context.Context, prev int, v Version) (Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.doc(v.Document)
	if err != nil {
		return Version{}, err
	}
	if prev != d.d.Published {
		return Version{}, fmt.Errorf("document %q is at version %d, not %d: %w", d.d.Name, d.d.Published, prev, ErrStale)
	}
	if v.Revision < 1 || v.Revision > len(d.revs) {
		return Version{}, fmt.Errorf("document %q revision %d: %w", d.d.Name, v.Revision, ErrNotFound)
	}
	v.Name, v.Number, v.Created, v.Body = d.d.Name, prev+1, m.now().UTC(), slices.Clone(v.Body)
	d.vers = append(d.vers, v)
	d.d.Published = v.Number
	return v, nil
}

// Published implements Repository.
func (m *Memory) Published(_ context.Context, name string) (Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.byName(name)
	if d == nil || len(d.vers) == 0 {
		return Version{}, fmt.Errorf("published version of %q: %w", name, ErrNotFound)
	}
	v := d.vers[len(d.vers)-1]
	v.Name, v.Body = d.d.Name, slices.Clone(v.Body)
	return v, nil
}

// Versions implements Repository.
func (m *Memory) Versions(_ context.Context, id string) ([]Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.doc(id)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(d.vers)
	for i := range out {
		out[i].Name, out[i].Body = d.d.Name, nil
	}
	return out, nil
}
