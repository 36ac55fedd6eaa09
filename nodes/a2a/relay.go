package a2a

import (
	"encoding/json"

	"github.com/ilmek-go/ilmek/runtime"
)

// RelayPause passes a remote agent's pause to this graph's caller: when r
// needs input, it interrupts the node (runtime.Interrupt[string]) with the
// remote agent's pending data as the payload ({"pending": [...]} from an
// ilmek agent, else {"text": statusText}), offering the labels of the
// remote interrupts' actions, and returns the person's answer, the text to
// send back on r's task (a2a_call with taskFrom and contextFrom, or
// Agent.Send): an ilmek agent maps a label to its action's value. It
// returns "" and no error when r needs no input. opts are added to the
// interrupt (a key, a deadline).
func RelayPause(ctx *runtime.Ctx, r Result, opts ...runtime.InterruptOption) (string, error) {
	if !r.NeedsInput {
		return "", nil
	}
	var payload any = map[string]string{"text": r.StatusText}
	var actions []runtime.Action
	if len(r.StatusData) > 0 && string(r.StatusData) != "null" {
		payload = r.StatusData
		var d struct {
			Pending []struct {
				Actions []runtime.Action `json:"actions"`
			} `json:"pending"`
		}
		if json.Unmarshal(r.StatusData, &d) == nil {
			seen := map[string]bool{}
			for _, p := range d.Pending {
				for _, a := range p.Actions {
					if a.Label != "" && !seen[a.Label] {
						seen[a.Label] = true
						actions = append(actions, runtime.Action{Label: a.Label})
					}
				}
			}
		}
	}
	if len(actions) > 0 {
		opts = append([]runtime.InterruptOption{runtime.WithActions(actions...)}, opts...)
	}
	return runtime.Interrupt[string](ctx, payload, opts...)
}
