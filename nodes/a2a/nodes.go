package a2a

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/ilmek-go/ilmek/nodes/internal/names"
	"github.com/ilmek-go/ilmek/nodes/internal/nodecfg"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// DefaultChannel is the channel an a2a_call node writes when its config
// names none.
const DefaultChannel = "result"

// CallConfig is the config of an "a2a_call" node: it sends Text, or the
// string in channel TextFrom (exactly one of the two), to the agent named
// Agent, continuing the remote conversation whose id is in channel
// ContextFrom and answering the task whose id is in channel TaskFrom when
// those channels are set, journaled under "a2a:<agent>:send", and writes
// channel To (default "result"): the whole [Result], or its text alone
// when TextOnly is set. A task that ended failed or rejected is a Result
// like any other (its State says so); with TextOnly, which has no room for
// the state, a task in any state but completed (failed, rejected,
// canceled, input-required, auth-required) fails the node with a
// *[TaskError] instead, not journaled, so a retry or a later run sends the
// message again.
//
//	{ "id": "ask", "type": "a2a_call",
//	  "config": { "agent": "support-desk", "textFrom": "question", "contextFrom": "conv", "to": "answer" } }
type CallConfig struct {
	Agent       string  `json:"agent"`
	Text        *string `json:"text,omitempty"`
	TextFrom    string  `json:"textFrom,omitempty"`
	ContextFrom string  `json:"contextFrom,omitempty"`
	TaskFrom    string  `json:"taskFrom,omitempty"`
	To          string  `json:"to,omitempty"`
	TextOnly    bool    `json:"textOnly,omitempty"`
}

// Registry returns the "a2a_call" node type over agents, keyed by their
// names, for an application to add to its registry.
func Registry(agents ...*Agent) runtime.Registry {
	return runtime.Registry{"a2a_call": CallFactory(agents...)}
}

// CallFactory builds "a2a_call" nodes over agents. Names are resolved when
// the graph is built: an unknown agent, neither or both of text and
// textFrom, an empty text or channel name, or two agents of one name is a
// *nodes.ConfigError naming the node. When the node runs, a channel named
// by textFrom must hold a string, and one named by contextFrom or taskFrom
// a string or nothing.
func CallFactory(agents ...*Agent) runtime.Factory {
	by := map[string]*Agent{}
	dup := ""
	for _, a := range agents {
		if _, ok := by[a.name]; ok && dup == "" {
			dup = a.name
		}
		by[a.name] = a
	}
	return func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg CallConfig
		c, err := nodecfg.Decode(n, &cfg)
		if err != nil {
			return nil, err
		}
		if err := c.Required("agent", cfg.Agent, "the name of a connected A2A agent"); err != nil {
			return nil, err
		}
		if dup != "" {
			return nil, c.Err("agent", fmt.Sprintf("two connected agents are named %q", dup), "give every agent its own name (WithName)")
		}
		agent, ok := by[cfg.Agent]
		if !ok {
			return nil, c.Unknown("agent", "names A2A agent "+names.Quote(cfg.Agent)+", which is not connected (connected: "+names.List(slices.Sorted(maps.Keys(by)))+")", "connect an agent of that name or fix the name")
		}
		switch {
		case cfg.TextFrom == "" && c.Has("textFrom") && !c.IsNull("textFrom"):
			fix := "name the channel that holds the text"
			if cfg.Text != nil {
				fix = "leave textFrom out to send text"
			}
			return nil, c.Err("textFrom", "is an empty channel name", fix)
		case cfg.Text == nil && cfg.TextFrom == "":
			return nil, c.Err("text", "is missing, and so is textFrom", "set text to the message, or textFrom to the channel that holds it")
		case cfg.Text != nil && cfg.TextFrom != "":
			return nil, c.Err("text", "is set, and so is textFrom", "keep one of them")
		case cfg.Text != nil && *cfg.Text == "":
			return nil, c.Err("text", "is empty", "set the message to send")
		}
		for key, v := range map[string]string{"contextFrom": cfg.ContextFrom, "taskFrom": cfg.TaskFrom} {
			if err := c.OptionalChannel(key, v); err != nil {
				return nil, err
			}
		}
		to, err := c.Channel("to", cfg.To, DefaultChannel)
		if err != nil {
			return nil, err
		}
		return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			var text string
			if cfg.Text != nil {
				text = *cfg.Text
			} else {
				t, ok := s[cfg.TextFrom].(string)
				if !ok || t == "" {
					return nil, fmt.Errorf("a2a_call node %q: channel %q holds %s, not the text to send; write a non-empty string there first", n.ID, cfg.TextFrom, describe(s[cfg.TextFrom]))
				}
				text = t
			}
			var opts SendOptions
			for _, f := range []struct {
				channel string
				into    *string
			}{{cfg.ContextFrom, &opts.ContextID}, {cfg.TaskFrom, &opts.TaskID}} {
				if f.channel == "" {
					continue
				}
				switch v := s[f.channel].(type) {
				case nil:
				case string:
					*f.into = v
				default:
					return nil, fmt.Errorf("a2a_call node %q: channel %q holds %T, not an id; write the id string there (a Result's contextId or taskId)", n.ID, f.channel, v)
				}
			}
			res, err := agent.send(ctx, text, opts, cfg.TextOnly)
			if te := (*TaskError)(nil); errors.As(err, &te) {
				return nil, fmt.Errorf("a2a_call node %q: %w; with textOnly the node fails, and the send is not journaled: a retry or a later run sends the message again (drop textOnly to write the task, state included, as the result)", n.ID, err)
			}
			if err != nil {
				return nil, err
			}
			if cfg.TextOnly {
				return runtime.Values{to: res.Text}, nil
			}
			return runtime.Values{to: res}, nil
		}, nil
	}
}

func describe(v any) string {
	if v == nil {
		return "nothing"
	}
	return fmt.Sprintf("a %T", v)
}
