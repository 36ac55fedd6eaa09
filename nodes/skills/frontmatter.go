package skills

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// A frontmatter value is a string (every scalar, whatever it looks like:
// "1.2", "true" and "null" stay text, as in the reference), a []string (a
// sequence of scalars) or a map[string]any (a nested mapping).

// Frontmatter is a SKILL.md split in two: the YAML block and the markdown
// after it.
type Frontmatter struct {
	// Data is the parsed block: string, []string and map[string]any values.
	Data map[string]any
	// Body is everything after the closing line, leading blank lines
	// removed.
	Body string
}

// ParseFrontmatter splits a markdown document into its YAML frontmatter and
// body. The document must start with a "---" line (a UTF-8 byte order mark
// is allowed) and close the block with a "---" or "..." line; CRLF and CR
// line ends read as LF. The block is YAML, read with the shapes the Agent
// Skills format uses: mappings, nested mappings, sequences of scalars (block
// or flow), plain, quoted and block scalars. What the reference refuses is
// refused with its codes: anchors, aliases and tags, flow mappings,
// sequences of mappings or of sequences (Unsupported), a repeated key
// (DuplicateKey), a block that is not a mapping (BadStructure). Other YAML
// syntax errors are BadStructure.
func ParseFrontmatter(text string) (*Frontmatter, error) {
	text = strings.TrimPrefix(text, "\uFEFF")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	if strings.TrimRight(lines[0], " \t") != "---" {
		return nil, fail(MissingFrontmatter, "SKILL.md must start with a `---` YAML frontmatter block")
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if t := strings.TrimRight(lines[i], " \t"); t == "---" || t == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, fail(UnterminatedFrontmatter, "the frontmatter block is not closed by a `---` line")
	}
	data, err := parseYAML(strings.Join(lines[1:end], "\n"))
	if err != nil {
		return nil, err
	}
	start := end + 1
	for start < len(lines) && strings.TrimSpace(lines[start]) == "" {
		start++
	}
	body := ""
	if start < len(lines) {
		body = strings.Join(lines[start:], "\n")
	}
	return &Frontmatter{Data: data, Body: body}, nil
}

func parseYAML(block string) (map[string]any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		return nil, fail(BadStructure, "the frontmatter is not valid YAML: "+strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind == 0 {
		return map[string]any{}, nil // an empty block
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return map[string]any{}, nil // only comments
	}
	if root.Kind != yaml.MappingNode {
		return nil, fail(BadStructure, "the frontmatter must be `key: value` lines, not a "+kindName(root))
	}
	v, err := convert(root, false)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "sequence"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

// convert turns a YAML node into a frontmatter value; inSeq is set for the
// items of a sequence, which must be scalars.
func convert(n *yaml.Node, inSeq bool) (any, error) {
	if n.Kind == yaml.AliasNode || n.Anchor != "" || n.Style&yaml.TaggedStyle != 0 {
		return nil, fail(Unsupported, "YAML anchors, aliases and tags are not supported in SKILL.md frontmatter"+line(n))
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value, nil
	case yaml.SequenceNode:
		if inSeq {
			return nil, fail(Unsupported, "nested blocks inside a sequence item are not supported in SKILL.md frontmatter"+line(n))
		}
		out := make([]string, 0, len(n.Content))
		for _, item := range n.Content {
			if item.Kind == yaml.MappingNode {
				return nil, fail(Unsupported, "sequences of mappings are not supported in SKILL.md frontmatter"+line(item))
			}
			v, err := convert(item, true)
			if err != nil {
				return nil, err
			}
			out = append(out, v.(string))
		}
		return out, nil
	case yaml.MappingNode:
		if inSeq {
			return nil, fail(Unsupported, "sequences of mappings are not supported in SKILL.md frontmatter"+line(n))
		}
		if n.Style&yaml.FlowStyle != 0 {
			return nil, fail(Unsupported, "flow mappings (`{…}`) are not supported in SKILL.md frontmatter"+line(n))
		}
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Anchor != "" || k.Style&yaml.TaggedStyle != 0 {
				return nil, fail(Unsupported, "frontmatter keys must be plain or quoted strings"+line(k))
			}
			if _, dup := out[k.Value]; dup {
				return nil, fail(DuplicateKey, "frontmatter key "+quote(k.Value)+" appears twice"+line(k))
			}
			cv, err := convert(v, false)
			if err != nil {
				return nil, err
			}
			out[k.Value] = cv
		}
		return out, nil
	}
	return nil, fail(BadStructure, "unexpected YAML node"+line(n))
}

// line names the frontmatter line of n (the file's line: the block starts
// on the second).
func line(n *yaml.Node) string {
	if n.Line == 0 {
		return ""
	}
	return " at frontmatter line " + itoa(n.Line+1)
}
