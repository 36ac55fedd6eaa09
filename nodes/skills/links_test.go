package skills

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResourcesListWhatReadResourceServes: a skill's resource list holds
// every file ReadResource serves and nothing it refuses. A link is
// followed, or listed, only when it resolves inside the skill, as the
// reference lists it: before, a link to a file or a folder outside was
// listed (a linked /tmp listed all of /tmp), advertising to a model paths
// ReadResource then refused as outside_skill, and a folder reached first
// through a link inside was left out under its own name.
func TestResourcesListWhatReadResourceServes(t *testing.T) {
	for _, c := range []struct {
		name  string
		links map[string]string // link (relative to the skill) -> target (relative to the skill's parent)
		want  []string
	}{
		{"no links", nil, []string{"refs/a.md", "refs/deep/b.md"}},
		{"file link out", map[string]string{"refs/escape.md": "secret.txt"}, []string{"refs/a.md", "refs/deep/b.md"}},
		{"folder link out", map[string]string{"linked": "elsewhere"}, []string{"refs/a.md", "refs/deep/b.md"}},
		{"link to the parent", map[string]string{"up": "."}, []string{"refs/a.md", "refs/deep/b.md"}},
		{"link to the skill itself", map[string]string{"refs/self": "vault"}, []string{"refs/a.md", "refs/deep/b.md"}},
		{"dangling link", map[string]string{"refs/gone.md": "vault/refs/nothing.md"}, []string{"refs/a.md", "refs/deep/b.md"}},
		{"file link inside", map[string]string{"refs/alias.md": "vault/refs/a.md"}, []string{"refs/a.md", "refs/alias.md", "refs/deep/b.md"}},
		// A folder reached through a link is listed under the link's name
		// too; its own name still lists it.
		{"folder link inside, sorted first", map[string]string{"a-mirror": "vault/refs/deep"}, []string{"a-mirror/b.md", "refs/a.md", "refs/deep/b.md"}},
		{"folder link to an ancestor inside", map[string]string{"refs/deep/loop": "vault/refs"}, []string{"refs/a.md", "refs/deep/b.md"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := skillDir(t, "vault", map[string]string{"refs/a.md": "a", "refs/deep/b.md": "b"})
			parent := filepath.Dir(dir)
			write(t, filepath.Join(parent, "secret.txt"), "outside the skill")
			write(t, filepath.Join(parent, "elsewhere", "loot.txt"), "loot")
			for link, target := range c.links {
				if err := os.Symlink(filepath.Join(parent, target), filepath.Join(dir, link)); err != nil {
					t.Skipf("no symbolic links here: %v", err)
				}
			}
			s, err := LoadDir(dir, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, s.Resources); d != "" {
				t.Errorf("resources (-want +got):\n%s", d)
			}
			cat, err := NewCatalog(*s)
			if err != nil {
				t.Fatal(err)
			}
			for _, rel := range s.Resources {
				if _, err := cat.ReadResource("vault", rel); err != nil {
					t.Errorf("listed resource %q does not read: %v", rel, err)
				}
			}
		})
	}
}
