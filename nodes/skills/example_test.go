package skills_test

import (
	"fmt"

	"github.com/ilmek-go/ilmek/nodes/skills"
)

// Skill folders become a catalog, and its level-1 prompt lists every
// skill's name and description, escaped.
func ExampleFromDirs() {
	cat, err := skills.FromDirs(skills.LoadOptions{}, "../../conformance/testdata/upstream/skills")
	if err != nil {
		fmt.Println(err)
		return
	}
	pdf, _ := cat.Get("pdf")
	fmt.Println(pdf.AllowedTools, pdf.Resources)
	fmt.Println(skills.RenderPrompt(cat.List()[:1], ""))
	// Output:
	// [Read Bash(python3:*)] [references/forms.md scripts/fill.py]
	// <available_skills>
	//   <skill>
	//     <name>brand-voice</name>
	//     <description>Write customer-facing copy in the AimTune voice: plain, warm &amp; specific — use for emails, release notes and &lt;announcements&gt;.</description>
	//   </skill>
	// </available_skills>
}
