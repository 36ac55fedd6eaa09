package nodes

import (
	"errors"
	"fmt"
)

// ErrUnknownName is wrapped by a [ConfigError] whose config names a server,
// tool, agent or skill the application did not connect.
var ErrUnknownName = errors.New("the config names something the application did not connect")

// ConfigError refuses a node of a built-in family when its graph is built:
// a config value that is missing or has no meaning (an empty channel name),
// or a name nothing connected answers to. Values of the wrong JSON kind and
// unknown keys are refused before it, by [runtime.DecodeConfig], as a
// *runtime.ConfigError.
type ConfigError struct {
	// Node and Type are the node's id and type.
	Node, Type string
	// Path is the refused value's JSON path from the config
	// ("config.server").
	Path string
	// Msg says what is wrong; Fix says what to do about it.
	Msg, Fix string
	// Err is ErrUnknownName for a name nothing connected, else nil.
	Err error
}

// Error names the node, its type, the refused value and the fix.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("config of node %q (type %q): %s: %s; %s", e.Node, e.Type, e.Path, e.Msg, e.Fix)
}

// Unwrap returns Err.
func (e *ConfigError) Unwrap() error { return e.Err }
