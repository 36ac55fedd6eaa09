package skills

import (
	"github.com/ilmek-go/ilmek/nodes/internal/names"
	"github.com/ilmek-go/ilmek/nodes/internal/nodecfg"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// DefaultChannel is the channel the skill and skills node types write when
// their config names none.
const DefaultChannel = "instructions"

// SkillConfig is the config of a "skill" node: it writes the instructions
// of the skill named Skill to channel To (default "instructions"), for a
// later node (a model call) to read.
//
//	{ "id": "brief", "type": "skill", "config": { "skill": "brand-voice", "to": "system" } }
type SkillConfig struct {
	Skill string `json:"skill"`
	To    string `json:"to,omitempty"`
}

// CatalogConfig is the config of a "skills" node: it writes the level-1
// catalog prompt ([RenderPrompt]) of every skill to channel To (default
// "instructions"). Intro replaces [DefaultIntro]; null or "" renders the
// block alone.
type CatalogConfig struct {
	To    string  `json:"to,omitempty"`
	Intro *string `json:"intro,omitempty"`
}

// Registry returns the "skill" and "skills" node types over src, for an
// application to add to its registry. Skill names are resolved when the
// graph is built: an unknown one, a missing "skill" or an empty "to" is a
// *nodes.ConfigError naming the node. Neither type calls anything remote,
// so neither journals a step.
func Registry(src Source) runtime.Registry {
	return runtime.Registry{"skill": SkillFactory(src), "skills": CatalogFactory(src)}
}

// SkillFactory builds "skill" nodes over src.
func SkillFactory(src Source) runtime.Factory {
	return func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg SkillConfig
		c, err := nodecfg.Decode(n, &cfg)
		if err != nil {
			return nil, err
		}
		if err := c.Required("skill", cfg.Skill, "the name of a skill"); err != nil {
			return nil, err
		}
		s, ok := src.Get(cfg.Skill)
		if !ok {
			known := make([]string, 0)
			for _, m := range src.List() {
				known = append(known, m.Name)
			}
			return nil, c.Unknown("skill", "names skill "+names.Quote(cfg.Skill)+", which the skill source does not hold (known: "+names.List(known)+")", "name a known skill or add the skill's folder")
		}
		to, err := c.Channel("to", cfg.To, DefaultChannel)
		if err != nil {
			return nil, err
		}
		text := s.Instructions
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{to: text}, nil
		}, nil
	}
}

// CatalogFactory builds "skills" nodes over src; the prompt is rendered
// when the node runs, from what src lists then.
func CatalogFactory(src Source) runtime.Factory {
	return func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg CatalogConfig
		c, err := nodecfg.Decode(n, &cfg)
		if err != nil {
			return nil, err
		}
		to, err := c.Channel("to", cfg.To, DefaultChannel)
		if err != nil {
			return nil, err
		}
		intro := DefaultIntro
		if c.Has("intro") {
			intro = ""
			if cfg.Intro != nil {
				intro = *cfg.Intro
			}
		}
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{to: RenderPrompt(src.List(), intro)}, nil
		}, nil
	}
}
