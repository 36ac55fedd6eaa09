package gen_test

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/ilmek-go/ilmek/gen"
	"github.com/ilmek-go/ilmek/spec"
)

// Generate the typed package of a document in memory, as ilmekgen does for
// `ilmekgen -o chatgraph --type messages=[]string chat.json`: LoadBindings
// resolves the --type flags (builtin types need no package load), and
// Generate returns the files without writing them. The program's node code
// then implements the Nodes interface shown below.
func ExampleGenerate() {
	doc, diags := spec.Decode("chat.json", []byte(`{
  "name": "chat",
  "channels": { "messages": { "reducer": "append" } },
  "nodes": [{ "id": "agent", "type": "llm", "config": { "model": "m-1" } }],
  "edges": [
    { "from": "__start__", "to": "agent" },
    { "from": "agent", "to": "__end__" }
  ]
}`))
	if diags.HasErrors() {
		fmt.Println(diags)
		return
	}
	b, diags := gen.LoadBindings(doc, gen.BindingSpec{Channels: map[string]string{"messages": "[]string"}}, gen.LoadConfig{})
	if diags.HasErrors() {
		fmt.Println(diags)
		return
	}
	files, diags := gen.Generate(doc, gen.Options{Package: "chatgraph", Source: "chat.json", Bindings: b})
	if diags.HasErrors() {
		fmt.Println(diags)
		return
	}
	for _, f := range files {
		fmt.Println(f.Name)
		if f.Name != "graph.gen.go" {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(f.Data))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			for _, p := range []string{"package ", "Messages ", "type LLMConfig", "Model ", "LLM(", "func New("} {
				if strings.HasPrefix(line, p) {
					fmt.Println("   ", line)
				}
			}
		}
	}
	// Output:
	// codec.gen.go
	// graph.gen.go
	//     package chatgraph
	//     Messages []string `json:"messages"`
	//     Messages []string `json:"messages,omitempty"`
	//     type LLMConfig struct {
	//     Model string `json:"model,omitempty"`
	//     LLM(id NodeID, cfg LLMConfig) (Node, error)
	//     func New(n Nodes, opts ...runtime.Option) (*Graph, error) {
	// program.gen.go
	// registry.gen.go
	// spec.gen.go
}
