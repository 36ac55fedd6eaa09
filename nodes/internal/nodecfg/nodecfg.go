// Package nodecfg reads the stored configs of the built-in node families:
// strictly (through runtime.DecodeConfig), with the refusals of meaning
// as *nodes.ConfigError.
package nodecfg

import (
	"encoding/json"

	"github.com/ilmek-go/ilmek/nodes"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// Config is a node's decoded config and the keys its document holds.
type Config struct {
	Node spec.Node
	keys map[string]json.RawMessage
}

// Decode decodes n's config into v as strictly as ilmekgen would, and
// keeps which keys are present (a null one included).
func Decode(n spec.Node, v any) (*Config, error) {
	if err := runtime.DecodeConfig(n, v); err != nil {
		return nil, err
	}
	c := &Config{Node: n, keys: map[string]json.RawMessage{}}
	if len(n.Config) > 0 && string(n.Config) != "null" {
		if err := json.Unmarshal(n.Config, &c.keys); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Has reports whether the stored config holds key.
func (c *Config) Has(key string) bool {
	_, ok := c.keys[key]
	return ok
}

// IsNull reports whether the stored config holds key with the value null.
func (c *Config) IsNull(key string) bool {
	v, ok := c.keys[key]
	return ok && string(v) == "null"
}

// Err is a *nodes.ConfigError about the config's key.
func (c *Config) Err(key, msg, fix string) error {
	return &nodes.ConfigError{Node: c.Node.ID, Type: c.Node.Type, Path: "config." + key, Msg: msg, Fix: fix}
}

// Unknown is a *nodes.ConfigError wrapping nodes.ErrUnknownName.
func (c *Config) Unknown(key, msg, fix string) error {
	return &nodes.ConfigError{Node: c.Node.ID, Type: c.Node.Type, Path: "config." + key, Msg: msg, Fix: fix, Err: nodes.ErrUnknownName}
}

// Required refuses an empty value of key.
func (c *Config) Required(key, value, what string) error {
	if value != "" {
		return nil
	}
	if c.Has(key) && !c.IsNull(key) {
		return c.Err(key, "is empty", "set it to "+what)
	}
	return c.Err(key, "is missing", "set it to "+what)
}

// Channel returns the channel named by key (value as decoded), def when
// the key is absent; an empty name is refused.
func (c *Config) Channel(key, value, def string) (string, error) {
	if value != "" {
		return value, nil
	}
	if c.Has(key) && !c.IsNull(key) {
		return "", c.Err(key, "is an empty channel name", "name the channel to write, or leave the key out to write "+quoteName(def))
	}
	return def, nil
}

// OptionalChannel refuses an empty channel name under key, which may be
// absent.
func (c *Config) OptionalChannel(key, value string) error {
	if value == "" && c.Has(key) && !c.IsNull(key) {
		return c.Err(key, "is an empty channel name", "name a channel or leave the key out")
	}
	return nil
}

func quoteName(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
