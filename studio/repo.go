package studio

import (
	"context"
	"errors"
	"time"
)

// Document is one graph document the studio keeps: its stable ID, the name
// people and services know it by (unique in a repository), who created it,
// its latest draft revision and, once published, its latest version.
type Document struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Owner   string    `json:"owner"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Revision is the number of the latest draft revision (1 for a new
	// document).
	Revision int `json:"revision"`
	// Published is the number of the latest published version; 0 when the
	// document was never published.
	Published int `json:"published"`
}

// Revision is one saved draft of a document: every save makes one, with
// the document's bytes (its canonical form when it decodes) and the
// fingerprint of a document without errors ("" for one with errors).
type Revision struct {
	Document    string    `json:"document"`
	Number      int       `json:"number"`
	Author      string    `json:"author"`
	Created     time.Time `json:"created"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	Body        []byte    `json:"-"`
}

// Version is one published version of a document: the revision it was
// made from, its fingerprint (the version identity that checkpoints
// record) and its bytes, which services load by the document's name.
type Version struct {
	Document    string    `json:"document"`
	Name        string    `json:"name"`
	Number      int       `json:"number"`
	Revision    int       `json:"revision"`
	Fingerprint string    `json:"fingerprint"`
	Publisher   string    `json:"publisher"`
	Created     time.Time `json:"created"`
	Body        []byte    `json:"-"`
}

// Repository stores the studio's documents, their draft revisions and
// their published versions. The studio owns it; the runtime's
// checkpoint.DocumentStore keeps only what runs need. Implementations:
// NewMemory here, package studio/sqlite and studio/postgres; the
// conformance suite in studio/repotest checks one.
//
// Errors: ErrNotFound for a missing document, revision or version,
// ErrNameTaken for a name another document has, ErrStale for a save or
// publish based on a revision that is not the latest.
type Repository interface {
	// Create stores a new document with its first revision (number 1).
	// d.ID, d.Name, d.Owner and d.Created are kept; Revision, Published
	// and Updated are set by the repository.
	Create(ctx context.Context, d Document, first Revision) (Document, error)
	// Get returns a document.
	Get(ctx context.Context, id string) (Document, error)
	// List returns every document, sorted by name.
	List(ctx context.Context) ([]Document, error)
	// Rename gives a document another name.
	Rename(ctx context.Context, id, name string) (Document, error)
	// Delete removes a document with its revisions and versions.
	Delete(ctx context.Context, id string) error
	// Save stores r as the next revision of document r.Document, when
	// base is its latest revision (else ErrStale), and returns it numbered.
	Save(ctx context.Context, base int, r Revision) (Revision, error)
	// Revision returns revision n of a document.
	Revision(ctx context.Context, id string, n int) (Revision, error)
	// Revisions lists a document's revisions, oldest first, without
	// their bodies.
	Revisions(ctx context.Context, id string) ([]Revision, error)
	// Publish makes revision v.Revision of document v.Document its next
	// version; v carries the fingerprint, body and publisher. prev is the
	// version number the caller reviewed against (0: none); another
	// version published since is ErrStale.
	Publish(ctx context.Context, prev int, v Version) (Version, error)
	// Published returns the latest published version of the document
	// named name.
	Published(ctx context.Context, name string) (Version, error)
	// Versions lists a document's published versions, oldest first,
	// without their bodies.
	Versions(ctx context.Context, id string) ([]Version, error)
}

var (
	// ErrNotFound is returned for a document, revision or version that
	// does not exist.
	ErrNotFound = errors.New("studio: not found")
	// ErrNameTaken is returned when another document already has the name.
	ErrNameTaken = errors.New("studio: document name taken")
	// ErrStale is returned when a save or publish is based on a revision
	// or version that is no longer the latest: reload and retry.
	ErrStale = errors.New("studio: stale revision")
)
