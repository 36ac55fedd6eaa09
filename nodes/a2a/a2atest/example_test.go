package a2atest_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ilmek-go/ilmek/nodes/a2a/a2atest"
)

// A scripted agent as a transport for tests: its card, and the task each
// message text gets back; Reduce sends every scripted text and reduces the
// answers as the conformance suite compares them.
func ExampleNewTransport() {
	s, err := a2atest.Parse([]byte(`{
  "card": {"protocolVersion": "0.3.0", "name": "Support Desk", "url": "https://bot.example.com/a2a", "version": "1.0.0"},
  "sends": {
    "where is my order?": {
      "kind": "task", "id": "task-1", "contextId": "conv-1",
      "status": {"state": "completed"},
      "artifacts": [{"artifactId": "a-1", "parts": [{"kind": "text", "text": "It ships today."}]}]
    }
  }
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := a2atest.Reduce(context.Background(), a2atest.NewTransport(s), s.Texts)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output:
	// {"error":{"code":-32001,"message":"task \"task-nope\" not found"},"name":"support-desk","results":{"where is my order?":{"taskId":"task-1","contextId":"conv-1","state":"completed","text":"It ships today.","statusText":"","needsInput":false}}}
}
