package skills

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Source is where skills come from, as a graph reads them: every skill's
// level-1 metadata, sorted by name, and a whole skill by name. A [Catalog]
// is one; an application may back another with a database or a remote
// registry.
type Source interface {
	List() []Metadata
	Get(name string) (Skill, bool)
}

// Catalog is an in-memory [Source] over loaded skills, from folders
// ([FromDirs]) or made in code; names are unique.
type Catalog struct {
	skills []Skill // sorted by name
}

// NewCatalog catalogs skills; two with one name are a *ParseError with
// code DuplicateSkill.
func NewCatalog(skills ...Skill) (*Catalog, error) {
	c := &Catalog{skills: make([]Skill, 0, len(skills))}
	for i := range skills {
		c.skills = append(c.skills, skills[i].clone())
	}
	slices.SortStableFunc(c.skills, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(c.skills); i++ {
		if c.skills[i].Name == c.skills[i-1].Name {
			return nil, fail(DuplicateSkill, "two skills are named "+quote(c.skills[i].Name))
		}
	}
	return c, nil
}

// FromDirs discovers the skill folders under roots ([Discover]) and
// catalogs them.
func FromDirs(opts LoadOptions, roots ...string) (*Catalog, error) {
	skills, err := Discover(opts, roots...)
	if err != nil {
		return nil, err
	}
	return NewCatalog(skills...)
}

// Len is the number of skills.
func (c *Catalog) Len() int { return len(c.skills) }

// List returns every skill's level-1 metadata, sorted by name; the slices
// and maps are the caller's.
func (c *Catalog) List() []Metadata {
	out := make([]Metadata, len(c.skills))
	for i := range c.skills {
		out[i] = c.skills[i].Meta()
	}
	return out
}

// Get returns the skill named name, instructions included, as a copy.
func (c *Catalog) Get(name string) (Skill, bool) {
	i, ok := slices.BinarySearchFunc(c.skills, name, func(s Skill, n string) int { return strings.Compare(s.Name, n) })
	if !ok {
		return Skill{}, false
	}
	return c.skills[i].clone(), true
}

// All returns every skill, sorted by name, as copies.
func (c *Catalog) All() []Skill {
	out := make([]Skill, len(c.skills))
	for i := range c.skills {
		out[i] = c.skills[i].clone()
	}
	return out
}

// ReadResource returns the text of one bundled file of the skill named
// name. rel is relative to the skill folder and must stay inside it: an
// absolute path, a path that leaves the folder ("..", "refs/../../x"), the
// folder itself, a NUL byte, or a link whose target is outside the folder
// is a *ParseError with code OutsideSkill, so a path a model supplies never
// reads outside the skill. An unknown skill is UnknownSkill; a skill with
// no folder (made in code) is NoResources; a missing file is the file
// system's error (fs.ErrNotExist).
func (c *Catalog) ReadResource(name, rel string) (string, error) {
	s, ok := c.Get(name)
	if !ok {
		return "", fail(UnknownSkill, "no skill named "+quote(name))
	}
	if s.Path == "" {
		return "", fail(NoResources, "skill "+quote(name)+" was not loaded from a folder and has no files")
	}
	if strings.ContainsRune(rel, 0) {
		return "", fail(OutsideSkill, "resource path "+quote(rel)+" is not a valid relative path")
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || filepath.VolumeName(rel) != "" {
		return "", fail(OutsideSkill, "resource paths are relative to the skill folder: "+rel)
	}
	root := filepath.Clean(s.Path)
	full := filepath.Join(root, rel)
	if !inside(root, full) {
		return "", fail(OutsideSkill, "resource "+quote(rel)+" is outside skill "+quote(name))
	}
	// The check above is lexical; a link inside the folder may point
	// anywhere, so the resolved target must stay inside the resolved
	// folder too.
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	realFull, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", err
	}
	if !inside(realRoot, realFull) {
		return "", fail(OutsideSkill, "resource "+quote(rel)+" links outside skill "+quote(name))
	}
	// Read through an os.Root of the folder, so a link swapped in after the
	// check cannot lead outside it either.
	r, err := os.OpenRoot(realRoot)
	if err != nil {
		return "", err
	}
	defer r.Close()
	relReal, err := filepath.Rel(realRoot, realFull)
	if err != nil {
		return "", err
	}
	data, err := r.ReadFile(relReal)
	if err != nil {
		// os.Root's refusal of a path leaving it has no exported error
		// value; its message says "escapes".
		var pe *fs.PathError
		if errors.As(err, &pe) && !errors.Is(err, fs.ErrNotExist) && strings.Contains(pe.Err.Error(), "escapes") {
			return "", fail(OutsideSkill, "resource "+quote(rel)+" links outside skill "+quote(name))
		}
		return "", err
	}
	return string(data), nil
}

// inside reports whether full is strictly inside root (not root itself);
// both are clean.
func inside(root, full string) bool {
	rel, err := filepath.Rel(root, full)
	if err != nil || rel == "." || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
