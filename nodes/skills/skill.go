package skills

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ilmek-go/ilmek/nodes/internal/names"
)

// The limits the Agent Skills format sets, in characters as the reference
// counts them (UTF-16 code units).
const (
	NameMax        = 64
	DescriptionMax = 1024
)

// Metadata is a skill's level 1: what a model sees before it picks a skill,
// and what the catalog prompt lists (name and description).
type Metadata struct {
	// Name is 1–64 lowercase letters, digits and single hyphens, and equals
	// the skill's folder name.
	Name string `json:"name"`
	// Description says what the skill does and when to use it: 1–1024
	// characters.
	Description string `json:"description"`
	// License, Compatibility, AllowedTools and Metadata are the optional
	// fields of the frontmatter (allowed-tools split on white space).
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	AllowedTools  []string          `json:"allowedTools,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
}

// Skill is a whole skill: its metadata (level 1), its instructions (level
// 2) and the names of its bundled files (level 3).
type Skill struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	Instructions  string            `json:"instructions"`
	Resources     []string          `json:"resources"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	AllowedTools  []string          `json:"allowedTools,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	// Path is the skill's folder when it was loaded from one; a skill made
	// in code or from an MCP prompt has none, and so no files to read.
	Path string `json:"-"`
}

// Meta returns the level-1 view of s, sharing nothing with it.
func (s *Skill) Meta() Metadata {
	m := Metadata{Name: s.Name, Description: s.Description, License: s.License, Compatibility: s.Compatibility}
	if s.AllowedTools != nil {
		m.AllowedTools = slices.Clone(s.AllowedTools)
	}
	if s.Metadata != nil {
		m.Metadata = make(map[string]string, len(s.Metadata))
		for k, v := range s.Metadata {
			m.Metadata[k] = v
		}
	}
	return m
}

// clone returns a copy of s that shares no slice or map with it.
func (s *Skill) clone() Skill {
	c := *s
	m := s.Meta()
	c.AllowedTools, c.Metadata = m.AllowedTools, m.Metadata
	c.Resources = slices.Clone(s.Resources)
	if c.Resources == nil {
		c.Resources = []string{}
	}
	return c
}

var namePattern = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// ValidName reports whether name follows the skill-name rule: 1–64
// lowercase ASCII letters, digits and hyphens, no hyphen leading, trailing
// or doubled.
func ValidName(name string) bool {
	return len(name) > 0 && len(name) <= NameMax && namePattern.MatchString(name)
}

// ParseOptions guide Parse.
type ParseOptions struct {
	// ExpectName, when set, is the name the frontmatter must hold (the
	// skill's folder name).
	ExpectName string
	// Resources are the skill's bundled files, sorted by Parse.
	Resources []string
	// Path is recorded as Skill.Path.
	Path string
}

// Parse reads the text of a SKILL.md. A refused document is a *ParseError
// with the frontmatter reader's code or one of InvalidName, NameMismatch,
// InvalidDescription and InvalidField.
func Parse(markdown string, opts ParseOptions) (*Skill, error) {
	fm, err := ParseFrontmatter(markdown)
	if err != nil {
		return nil, err
	}
	name, ok := fm.Data["name"].(string)
	if !ok || !ValidName(name) {
		return nil, fail(InvalidName, "frontmatter \"name\" must be 1–64 lowercase letters, digits or single hyphens; got "+jsonText(fm.Data["name"]))
	}
	if opts.ExpectName != "" && name != opts.ExpectName {
		return nil, fail(NameMismatch, "frontmatter \"name\" is "+quote(name)+" but the skill folder is "+quote(opts.ExpectName)+"; they must match")
	}
	desc, ok := fm.Data["description"].(string)
	desc = strings.TrimSpace(desc)
	if !ok || desc == "" || names.LenUTF16(desc) > DescriptionMax {
		return nil, fail(InvalidDescription, "frontmatter \"description\" is required and must be 1–1024 characters")
	}
	s := &Skill{
		Name:         name,
		Description:  desc,
		Instructions: strings.TrimSpace(fm.Body),
		Resources:    slices.Sorted(slices.Values(opts.Resources)),
		Path:         opts.Path,
	}
	if s.Resources == nil {
		s.Resources = []string{}
	}
	if s.License, err = optionalString(fm.Data, "license"); err != nil {
		return nil, err
	}
	if s.Compatibility, err = optionalString(fm.Data, "compatibility"); err != nil {
		return nil, err
	}
	if s.AllowedTools, err = allowedTools(fm.Data["allowed-tools"]); err != nil {
		return nil, err
	}
	if s.Metadata, err = metadata(fm.Data["metadata"]); err != nil {
		return nil, err
	}
	return s, nil
}

func optionalString(data map[string]any, key string) (string, error) {
	v, ok := data[key]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fail(InvalidField, "frontmatter "+quote(key)+" must be a string")
	}
	return strings.TrimSpace(s), nil
}

func allowedTools(v any) ([]string, error) {
	var tools []string
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		tools = strings.Fields(v)
	case []string:
		for _, item := range v {
			tools = append(tools, strings.Fields(item)...)
		}
	default:
		return nil, fail(InvalidField, "frontmatter \"allowed-tools\" must be a space-separated string or a list of strings")
	}
	if len(tools) == 0 {
		return nil, nil
	}
	return tools, nil
}

func metadata(v any) (map[string]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		if v == "" {
			return nil, nil
		}
	case map[string]any:
		out := make(map[string]string, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			s, ok := v[k].(string)
			if !ok {
				return nil, fail(InvalidField, "frontmatter \"metadata."+k+"\" must be a string")
			}
			out[k] = s
		}
		return out, nil
	}
	return nil, fail(InvalidField, "frontmatter \"metadata\" must be a mapping of string keys to string values")
}

func quote(s string) string { return names.Quote(s) }

func itoa(n int) string { return strconv.Itoa(n) }

// jsonText shows a frontmatter value as JSON, null when absent.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}
