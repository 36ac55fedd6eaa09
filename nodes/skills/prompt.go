package skills

import "strings"

// DefaultIntro is what the catalog prompt tells a model before the list,
// unless the application says otherwise.
const DefaultIntro = "You have the following skills available. Each entry gives a skill's name and what it is for. " +
	"When a task matches a skill, load that skill's full instructions by name before you act on the task."

// RenderPrompt renders the level-1 catalog for a system prompt: intro (none
// when ""), a blank line, then
//
//	<available_skills>
//	  <skill>
//	    <name>pdf</name>
//	    <description>Fill, merge and read PDF forms.</description>
//	  </skill>
//	</available_skills>
//
// with &, < and > escaped in names and descriptions, so a description
// cannot close the block. The text is byte for byte the reference's. An
// empty list renders "": nothing to announce.
func RenderPrompt(list []Metadata, intro string) string {
	if len(list) == 0 {
		return ""
	}
	var b strings.Builder
	if intro != "" {
		b.WriteString(intro)
		b.WriteString("\n\n")
	}
	b.WriteString("<available_skills>\n")
	for _, s := range list {
		b.WriteString("  <skill>\n    <name>")
		b.WriteString(escapeXML(s.Name))
		b.WriteString("</name>\n    <description>")
		b.WriteString(escapeXML(s.Description))
		b.WriteString("</description>\n  </skill>\n")
	}
	b.WriteString("</available_skills>")
	return b.String()
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func escapeXML(s string) string { return xmlEscaper.Replace(s) }
