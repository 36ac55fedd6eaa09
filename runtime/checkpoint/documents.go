package checkpoint

import "context"

// DocumentStore is implemented by a Checkpointer that keeps, by
// fingerprint, the stored form of every graph version that wrote a
// checkpoint (see Graph.Fingerprint), so that a run on another version can
// compare the thread's old document with its own. Memory, the SQLite and
// the PostgreSQL stores implement it.
type DocumentStore interface {
	// PutDocument stores doc under fingerprint; storing the same pair again
	// does nothing.
	PutDocument(ctx context.Context, fingerprint string, doc []byte) error
	// GetDocument returns the document stored under fingerprint, or
	// ErrNotFound.
	GetDocument(ctx context.Context, fingerprint string) ([]byte, error)
}
