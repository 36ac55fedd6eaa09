package runtime

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Action is one answer an interrupt offers (WithActions): a label a person
// picks and the answer it stands for (checkpoint.Action). A front end
// shows the labels as buttons; an A2A agent serving the graph answers a
// reply equal to a label with that action's value.
type Action = checkpoint.Action

// ErrBadAction is matched (errors.Is) by the error Interrupt returns when
// an action offered with WithActions has no label, repeats a label, or has
// a value the interrupt's answer type does not accept.
var ErrBadAction = errors.New("an interrupt's action is not usable")

// NewAction is an Action whose value is v encoded as JSON; a v that does
// not encode makes the Interrupt offering it fail with ErrBadAction. A nil
// v leaves the value empty: the label itself is the answer.
func NewAction(label string, v any) Action {
	if v == nil {
		return Action{Label: label}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		// An invalid value is caught by checkActions, which names it.
		return Action{Label: label, Value: json.RawMessage("\x00" + err.Error())}
	}
	return Action{Label: label, Value: raw}
}

// WithActions offers the answers a person can pick for this interrupt. The
// actions are recorded on the pending interrupt (Thread.Pending,
// ListThreads) so a user interface or an agent can show them; they do not
// restrict what Resume accepts. Each label must be non-empty and unique,
// and each value (when set) must decode into the interrupt's answer type.
func WithActions(actions ...Action) InterruptOption {
	return interruptOptionFunc(func(c *interruptConfig) {
		c.actions = append(c.actions, actions...)
	})
}

// checkActions validates the actions against the answer type x.
func (c *interruptConfig) checkActions(x *Expects) error {
	seen := make(map[string]bool, len(c.actions))
	for i, a := range c.actions {
		switch {
		case a.Label == "":
			return fmt.Errorf("interrupt %q: action %d has no label; give every action of WithActions a label: %w", c.key, i, ErrBadAction)
		case seen[a.Label]:
			return fmt.Errorf("interrupt %q: action label %q is offered twice; make the labels of WithActions unique: %w", c.key, a.Label, ErrBadAction)
		}
		seen[a.Label] = true
		if len(a.Value) == 0 {
			continue
		}
		if !json.Valid(a.Value) {
			return fmt.Errorf("interrupt %q: action %q has a value that is not JSON; build it with runtime.NewAction: %w", c.key, a.Label, ErrBadAction)
		}
		if err := checkAnswer(x.Schema, a.Value); err != nil {
			return fmt.Errorf("interrupt %q: action %q's value %s does not decode into %s (%v): %w", c.key, a.Label, a.Value, x.Type, err, ErrBadAction)
		}
	}
	return nil
}

// offer records the actions on the pending interrupt halt just added.
func (t *taskInfo) offer(actions []Action) {
	if len(actions) == 0 || len(t.pending) == 0 {
		return
	}
	t.pending[len(t.pending)-1].Actions = append([]Action(nil), actions...)
}

// AnswerFor is the answer a reply stands for on the pending interrupt p:
// the value of the action whose label equals reply, the label as a JSON
// string for an action without a value, and ok false when no action has
// that label.
func AnswerFor(p PendingInterrupt, reply string) (json.RawMessage, bool) {
	for _, a := range p.Actions {
		if a.Label != reply {
			continue
		}
		if len(a.Value) > 0 {
			return a.Value, true
		}
		raw, _ := json.Marshal(a.Label)
		return raw, true
	}
	return nil, false
}
