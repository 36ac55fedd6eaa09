package skills

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// File is the file every skill folder holds at its root.
const File = "SKILL.md"

// LoadOptions guide LoadDir and Discover.
type LoadOptions struct {
	// LooseNames lets a folder's name differ from its skill's; by default
	// they must be equal (the format's rule, which makes a skill
	// addressable by where it was found).
	LooseNames bool
}

// LoadDir loads the skill in dir: its SKILL.md and the list of its bundled
// files (every file under the folder except the root SKILL.md and entries
// whose names start with a dot, as sorted "/"-separated relative paths; a
// link is listed, or a linked folder followed once, only when it resolves
// inside the folder, so the list holds what Catalog.ReadResource serves). A folder without SKILL.md is a
// *ParseError with code NotASkill; a malformed SKILL.md one with the
// reader's code, naming the file.
func LoadDir(dir string, opts LoadOptions) (*Skill, error) {
	path, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(path, File)
	md, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &ParseError{Code: NotASkill, Msg: "the folder has no " + File + "; a skill folder holds one at its root", File: path}
	} else if err != nil {
		return nil, err
	}
	res, err := listResources(path)
	if err != nil {
		return nil, err
	}
	po := ParseOptions{Resources: res, Path: path}
	if !opts.LooseNames {
		po.ExpectName = filepath.Base(path)
	}
	s, err := Parse(string(md), po)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) && pe.File == "" {
			pe.File = file
		}
		return nil, err
	}
	return s, nil
}

// Discover loads every skill folder directly under each root: a folder
// counts when it holds a SKILL.md, anything else is skipped, and a root
// that does not exist holds no skills. A malformed SKILL.md fails the whole
// discovery: a broken skill should fail loudly, not vanish from the
// catalog. A later root's skill replaces an earlier one of the same name
// (project skills over shared ones). The result is sorted by name.
func Discover(opts LoadOptions, roots ...string) ([]Skill, error) {
	byName := map[string]Skill{}
	for _, root := range roots {
		entries, err := os.ReadDir(root)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		for _, e := range entries { // ReadDir sorts by name
			dir := filepath.Join(root, e.Name())
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, File)); err != nil {
				continue
			}
			s, err := LoadDir(dir, opts)
			if err != nil {
				return nil, err
			}
			byName[s.Name] = *s
		}
	}
	out := make([]Skill, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out, nil
}

// listResources walks dir for its bundled files. A link is followed, or
// listed, only when it resolves inside the skill, as the reference lists
// it: one pointing out would advertise a resource ReadResource refuses,
// and one pointing at an ancestor would walk it. A linked folder is
// followed once per real folder, so a loop of links ends; a folder that is
// no link is always walked, so a link to it does not hide its own name.
func listResources(dir string) ([]string, error) {
	out := []string{}
	realRoot, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{realRoot: true}
	var walk func(cur string) error
	walk = func(cur string) error {
		entries, err := os.ReadDir(cur)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			full := filepath.Join(cur, e.Name())
			isDir := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 {
				real, err := filepath.EvalSymlinks(full)
				if err != nil || !inside(realRoot, real) {
					continue // dangling, or outside the skill
				}
				fi, err := os.Stat(real)
				if err != nil {
					continue
				}
				if isDir = fi.IsDir(); isDir {
					if seen[real] {
						continue
					}
					seen[real] = true
				}
			} else if isDir {
				if real, err := filepath.EvalSymlinks(full); err == nil {
					seen[real] = true
				}
			}
			if isDir {
				if err := walk(full); err != nil {
					return err
				}
				continue
			}
			if cur == dir && e.Name() == File {
				continue
			}
			rel, err := filepath.Rel(dir, full)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	}
	if err := walk(dir); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}
