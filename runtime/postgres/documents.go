package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var _ checkpoint.DocumentStore = (*Store)(nil)

// PutDocument stores the document of a graph version under its fingerprint
// (ilmek_documents); a fingerprint already stored keeps its document. The
// Store remembers the fingerprints it stored (up to maxDocsStored, then
// starts over): a run puts its graph's document before its first commit,
// and a fingerprint this Store stored costs no statement again (no
// statement deletes a document row).
func (s *Store) PutDocument(ctx context.Context, fingerprint string, doc []byte) error {
	if _, ok := s.docsStored.Load(fingerprint); ok {
		return nil
	}
	if doc == nil {
		doc = []byte{}
	}
	if _, err := s.pool.Exec(ctx, s.q.putDocument, fingerprint, doc); err != nil {
		return fmt.Errorf("postgres: put document %s in %s: %w", fingerprint, s.where(), err)
	}
	if s.docsCount.Add(1) > maxDocsStored {
		s.docsStored.Clear()
		s.docsCount.Store(1)
	}
	s.docsStored.Store(fingerprint, struct{}{})
	return nil
}

// maxDocsStored bounds how many fingerprints a Store remembers storing.
const maxDocsStored = 1024

// GetDocument returns the document stored under fingerprint, or
// runtime.ErrNotFound.
func (s *Store) GetDocument(ctx context.Context, fingerprint string) ([]byte, error) {
	var doc []byte
	err := s.pool.QueryRow(ctx, s.q.getDocument, fingerprint).Scan(&doc)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, runtime.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("postgres: get document %s from %s: %w", fingerprint, s.where(), err)
	}
	return doc, nil
}
