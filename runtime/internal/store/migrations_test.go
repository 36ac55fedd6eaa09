package store

import (
	"testing"
	"testing/fstest"
)

// TestMigrations: files come back in version order; a gap or a badly
// named file is refused.
func TestMigrations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  []string // names in order; nil: refused
	}{
		{"ordered", []string{"m/0002_b.sql", "m/0001_a.sql"}, []string{"0001_a", "0002_b"}},
		{"gap", []string{"m/0001_a.sql", "m/0003_c.sql"}, nil},
		{"unnumbered", []string{"m/init.sql"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for _, f := range tc.files {
				fsys[f] = &fstest.MapFile{Data: []byte("SELECT 1;")}
			}
			ms, err := Migrations(fsys, "m/*.sql")
			if tc.want == nil {
				if err == nil {
					t.Fatalf("accepted %v", ms)
				}
				return
			}
			if err != nil || len(ms) != len(tc.want) {
				t.Fatalf("%v, %v", ms, err)
			}
			for i, m := range ms {
				if m.Name != tc.want[i] || m.Version != i+1 || m.SQL != "SELECT 1;" {
					t.Errorf("migration %d: %+v, want %s", i, m, tc.want[i])
				}
			}
		})
	}
}
