package a2atest

import (
	"context"
	"errors"
	"fmt"

	"github.com/ilmek-go/ilmek/nodes/a2a"
)

// Reduce does with t what the reference's generator does with its
// scripted agent, and returns the value its expected.json holds: "name"
// (the agent's, from its card), "results" (each of texts sent, in order,
// the result without its task) and "error" (the code and message of the
// JSON-RPC error tasks/get of an unknown task answers).
func Reduce(ctx context.Context, t a2a.Transport, texts []string) (map[string]any, error) {
	agent, err := a2a.Connect(ctx, t, a2a.WithMessageIDs(func() string { return "m-x" }))
	if err != nil {
		return nil, err
	}
	results := map[string]a2a.Result{}
	for _, text := range texts {
		r, err := agent.Invoke(ctx, text, a2a.SendOptions{})
		if err != nil {
			return nil, err
		}
		r.Task = nil
		results[text] = r
	}
	out := map[string]any{"name": agent.Name(), "results": results}
	_, err = agent.GetTask(ctx, "task-nope")
	var rpc *a2a.RPCError
	if !errors.As(err, &rpc) {
		return nil, fmt.Errorf("a2atest: tasks/get of an unknown task: want a JSON-RPC error, got %v", err)
	}
	out["error"] = map[string]any{"code": rpc.Code, "message": rpc.Message}
	return out, nil
}
