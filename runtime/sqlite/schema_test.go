package sqlite

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOpenRefusesUnusableSchemas: a file whose ilmek tables lack a valid
// version row, or carry a version this build does not know, is refused
// with ErrSchema and left byte for byte as it was; it is never re-stamped
// as a new file.
func TestOpenRefusesUnusableSchemas(t *testing.T) {
	tests := []struct {
		name, damage, want string
	}{
		{"garbled version", "UPDATE ilmek_meta SET value = 'v1' WHERE key = 'schema_version'", `schema version "v1" is not a version number`},
		{"empty version", "UPDATE ilmek_meta SET value = '' WHERE key = 'schema_version'", `schema version "" is not a version number`},
		{"zero version", "UPDATE ilmek_meta SET value = '0' WHERE key = 'schema_version'", `schema version "0" is not a version number`},
		{"missing version row", "DELETE FROM ilmek_meta", "has no schema_version row"},
		{"dropped meta table", "DROP TABLE ilmek_meta", "has ilmek tables (ilmek_channels, ilmek_checkpoints, ilmek_documents, ilmek_events, ilmek_journals, ilmek_leases, ilmek_schedule_firings, ilmek_schedules, ilmek_threads, ilmek_versions) but no ilmek_meta table"},
		{"newer version", "UPDATE ilmek_meta SET value = '99' WHERE key = 'schema_version'", "schema version 99 but this build knows version " + strconv.Itoa(schemaVersion)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "threads.db")
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Put(t.Context(), cp("t", "1"), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.w.Exec(tc.damage); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Open(path)
			if err == nil {
				again.Close()
				t.Fatal("Open accepted the file")
			}
			if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open: %v; want ErrSchema with %q", err, tc.want)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("the refused file was changed")
			}
		})
	}
}
