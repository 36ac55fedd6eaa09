package skills_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/nodes"
	"github.com/ilmek-go/ilmek/nodes/skills"
	"github.com/ilmek-go/ilmek/runtime"
)

func doc(nodeType, config string) []byte {
	return []byte(`{"name": "g", "channels": {"instructions": {}, "system": {}},
  "nodes": [{"id": "n", "type": "` + nodeType + `", "config": ` + config + `}],
  "edges": [{"from": "__start__", "to": "n"}, {"from": "n", "to": "__end__"}]}`)
}

func TestNodes(t *testing.T) {
	cat, err := skills.NewCatalog(
		skills.Skill{Name: "brand-voice", Description: "Copy & <tone>", Instructions: "Short sentences."},
		skills.Skill{Name: "pdf", Description: "PDF forms", Instructions: "Use the helpers."},
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, typ, config, channel, want string
	}{
		{"skill to a channel", "skill", `{"skill": "brand-voice", "to": "system"}`, "system", "Short sentences."},
		{"skill to the default channel", "skill", `{"skill": "pdf"}`, "instructions", "Use the helpers."},
		{"catalog with the default intro", "skills", `{}`, "instructions", skills.DefaultIntro + "\n\n<available_skills>\n  <skill>\n    <name>brand-voice</name>\n    <description>Copy &amp; &lt;tone&gt;</description>\n  </skill>\n  <skill>\n    <name>pdf</name>\n    <description>PDF forms</description>\n  </skill>\n</available_skills>"},
		{"catalog with a null intro", "skills", `{"intro": null, "to": "system"}`, "system", "<available_skills>\n  <skill>\n    <name>brand-voice</name>\n    <description>Copy &amp; &lt;tone&gt;</description>\n  </skill>\n  <skill>\n    <name>pdf</name>\n    <description>PDF forms</description>\n  </skill>\n</available_skills>"},
		{"catalog with an intro", "skills", `{"intro": "Pick one."}`, "instructions", "Pick one.\n\n<available_skills>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := runtime.Load("g.json", doc(c.typ, c.config), skills.Registry(cat))
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Invoke(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := res.State[c.channel].(string)
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("%s = %q, want %q", c.channel, got, c.want)
			}
		})
	}
}

func TestNodesBuildErrors(t *testing.T) {
	cat, _ := skills.NewCatalog(skills.Skill{Name: "pdf", Description: "d"})
	for _, c := range []struct {
		name, typ, config, want string
		unknown                 bool
		configErr               bool
	}{
		{"unknown skill", "skill", `{"skill": "ghost"}`, `config.skill: names skill "ghost", which the skill source does not hold (known: "pdf")`, true, false},
		{"missing skill", "skill", `{}`, "config.skill: is missing", false, false},
		{"empty to", "skill", `{"skill": "pdf", "to": ""}`, "config.to: is an empty channel name", false, false},
		{"empty to on skills", "skills", `{"to": ""}`, "config.to: is an empty channel name", false, false},
		{"unknown key", "skill", `{"skill": "pdf", "too": "x"}`, `"too"`, false, true},
		{"wrong kind", "skills", `{"intro": 3}`, "config.intro", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runtime.Load("g.json", doc(c.typ, c.config), skills.Registry(cat))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `node "n"`) {
				t.Fatalf("err = %v, want it to name node \"n\" and say %q", err, c.want)
			}
			// The factory's own error is typed, and matched through Load's.
			var ce *nodes.ConfigError
			var re *runtime.ConfigError
			if c.configErr != errors.As(err, &re) || !c.configErr && !errors.As(err, &ce) {
				t.Errorf("Load's err = %T %v, want *runtime.ConfigError %v", err, err, c.configErr)
			}
			if c.unknown != errors.Is(err, nodes.ErrUnknownName) {
				t.Errorf("errors.Is(err, ErrUnknownName) = %v, want %v", !c.unknown, c.unknown)
			}
		})
	}
}
