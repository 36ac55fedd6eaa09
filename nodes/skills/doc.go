// Package skills reads Agent Skills folders and serves them to graphs: the
// "skill" and "skills" node types of the ilmek reference.
//
// A skill is a folder with a SKILL.md at its root: YAML frontmatter that
// names and describes it, then markdown instructions; anything else in the
// folder (scripts/, references/) is a bundled resource. The format is made
// for progressive disclosure, and the package models its three levels: a
// model sees every skill's name and description up front ([Metadata], the
// catalog prompt of [RenderPrompt]), reads a skill's instructions when a
// task matches ([Skill]), and opens a bundled file only when the
// instructions point at it ([Catalog.ReadResource], which never reads
// outside the skill's folder).
//
// [Parse] reads one SKILL.md with the reference's rules: name 1–64
// lowercase letters, digits and single hyphens, equal to the folder's
// name; description 1–1024 characters; optional license, compatibility,
// allowed-tools (a space-separated string or a list) and metadata (string
// to string). Every refusal is a *[ParseError] whose [Code] is the
// reference's (errors.Is(err, skills.InvalidName)). [Discover] and
// [FromDirs] load every skill folder under some roots.
//
// In a document, a "skill" node writes one skill's instructions to a
// channel and a "skills" node writes the catalog prompt; [Registry] gives
// both over a [Source], resolving skill names when the graph is built:
//
//	cat, err := skills.FromDirs(skills.LoadOptions{}, "skills")
//	reg := runtime.Registry{ /* the application's types */ }
//	maps.Copy(reg, skills.Registry(cat))
//
// The frontmatter is read with go.yaml.in/yaml/v3, the one dependency the
// package adds: every scalar stays text ("1.2" is not a number), and what
// the reference's small reader refuses (anchors, aliases, tags, flow
// mappings, sequences of mappings) is refused with its codes. Where a
// YAML reader and the reference's differ on a malformed block, the
// difference is in which code names the refusal; conformance/README.md
// lists it.
package skills
