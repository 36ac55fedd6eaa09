package mcp

import (
	"context"
	"slices"
	"strings"

	"github.com/ilmek-go/ilmek/nodes/internal/names"
	"github.com/ilmek-go/ilmek/nodes/skills"
)

// SkillsOptions guide Skills.
type SkillsOptions struct {
	// Prefix is put before each prompt's name; nil means "<server>-", so
	// prompt review of server github becomes skill github-review.
	Prefix *string
}

// Skills turns the server's prompts into skills, so a model finds them as
// it finds SKILL.md folders (a [skills.Catalog] takes both):
//
//   - the name is the prefix and the prompt's name coerced to the skill-name
//     rule ([ToSkillName]);
//   - the description is the prompt's, or `The "<prompt>" prompt of MCP
//     server "<server>".`, cut to 1024 characters;
//   - a prompt with no required argument is fetched now, and its text is the
//     instructions; one that needs arguments cannot be fetched blind, so its
//     instructions list the arguments (each "- name (required): description")
//     and say it is fetched per use;
//   - metadata holds server, prompt and, when it takes any, arguments (their
//     names joined with ",").
//
// The skills are sorted by name. A failed fetch fails the whole conversion.
func Skills(ctx context.Context, tb *Toolbox, opts SkillsOptions) ([]skills.Skill, error) {
	prefix := tb.name + "-"
	if opts.Prefix != nil {
		prefix = *opts.Prefix
	}
	prompts, err := tb.Prompts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]skills.Skill, 0, len(prompts))
	for _, p := range prompts {
		desc := p.Description
		if desc == "" {
			desc = "The " + names.Quote(p.Name) + " prompt of MCP server " + names.Quote(tb.name) + "."
		}
		s := skills.Skill{
			Name:        ToSkillName(prefix + p.Name),
			Description: names.CutUTF16(desc, skills.DescriptionMax),
			Resources:   []string{},
			Metadata:    map[string]string{"server": tb.name, "prompt": p.Name},
		}
		required := false
		argNames := make([]string, len(p.Arguments))
		var list strings.Builder
		for i, a := range p.Arguments {
			argNames[i] = a.Name
			required = required || a.Required
			if i > 0 {
				list.WriteByte('\n')
			}
			list.WriteString("- " + a.Name)
			if a.Required {
				list.WriteString(" (required)")
			}
			if a.Description != "" {
				list.WriteString(": " + a.Description)
			}
		}
		if len(p.Arguments) > 0 {
			s.Metadata["arguments"] = strings.Join(argNames, ",")
		}
		if required {
			s.Instructions = "This skill is the MCP prompt " + names.Quote(p.Name) + " on server " + names.Quote(tb.name) +
				". It takes arguments, so its text is fetched per use with those arguments:\n" + list.String()
		} else if s.Instructions, err = tb.FetchPrompt(ctx, p.Name, map[string]string{}); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b skills.Skill) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ToSkillName coerces any text to a valid skill name: lowercased, every
// run of characters outside [a-z0-9] one hyphen, hyphens trimmed, cut to
// 64 characters; "prompt" when nothing is left.
func ToSkillName(raw string) string {
	if s := names.Slug(raw, skills.NameMax, true); s != "" {
		return s
	}
	return "prompt"
}
