package skills

// Code is the stable reason a skill could not be read or a resource could
// not be served: the reference's error codes, the same in every port. A
// *ParseError unwraps to its Code, so errors.Is(err, skills.InvalidName)
// tests for one.
type Code string

// Error returns the code, prefixed with the package name.
func (c Code) Error() string { return "skills: " + string(c) }

// The codes. The frontmatter reader's: MissingFrontmatter,
// UnterminatedFrontmatter, BadIndentation, BadStructure, DuplicateKey,
// Unsupported. The SKILL.md fields': InvalidName, NameMismatch,
// InvalidDescription, InvalidField. The loader's and catalog's: NotASkill,
// DuplicateSkill, UnknownSkill, NoResources, OutsideSkill.
const (
	MissingFrontmatter      Code = "missing_frontmatter"
	UnterminatedFrontmatter Code = "unterminated_frontmatter"
	BadIndentation          Code = "bad_indentation"
	BadStructure            Code = "bad_structure"
	DuplicateKey            Code = "duplicate_key"
	Unsupported             Code = "unsupported"
	InvalidName             Code = "invalid_name"
	NameMismatch            Code = "name_mismatch"
	InvalidDescription      Code = "invalid_description"
	InvalidField            Code = "invalid_field"
	NotASkill               Code = "not_a_skill"
	DuplicateSkill          Code = "duplicate_skill"
	UnknownSkill            Code = "unknown_skill"
	NoResources             Code = "no_resources"
	OutsideSkill            Code = "outside_skill"
)

// ParseError says why a SKILL.md, a skill folder or a resource was refused.
type ParseError struct {
	// Code is the stable reason; Msg says it for people.
	Code Code
	Msg  string
	// File is the SKILL.md or folder concerned, when there is one.
	File string
}

// Error returns the file (when known), the message and the code.
func (e *ParseError) Error() string {
	s := e.Msg + " (" + string(e.Code) + ")"
	if e.File != "" {
		return e.File + ": " + s
	}
	return s
}

// Unwrap returns the Code.
func (e *ParseError) Unwrap() error { return e.Code }

func fail(code Code, msg string) *ParseError { return &ParseError{Code: code, Msg: msg} }
