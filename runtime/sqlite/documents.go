package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var _ checkpoint.DocumentStore = (*Store)(nil)

// PutDocument stores the document of a graph version under its fingerprint
// (ilmek_documents); a fingerprint already stored keeps its document.
func (s *Store) PutDocument(ctx context.Context, fingerprint string, doc []byte) error {
	if _, err := s.w.ExecContext(ctx, "INSERT OR IGNORE INTO ilmek_documents (fingerprint, doc) VALUES (?, ?)", fingerprint, doc); err != nil {
		return fmt.Errorf("sqlite: put document %s in %q: %w", fingerprint, s.path, err)
	}
	return nil
}

// GetDocument returns the document stored under fingerprint, or
// runtime.ErrNotFound.
func (s *Store) GetDocument(ctx context.Context, fingerprint string) ([]byte, error) {
	var doc []byte
	err := s.r.QueryRowContext(ctx, "SELECT doc FROM ilmek_documents WHERE fingerprint = ?", fingerprint).Scan(&doc)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, runtime.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("sqlite: get document %s from %q: %w", fingerprint, s.path, err)
	}
	return doc, nil
}
