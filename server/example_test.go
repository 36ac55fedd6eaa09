package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/server"
)

// Approval is the answer a person gives; its title and description tags
// label the console's form.
type Approval struct {
	Approved bool   `json:"approved" title:"Publish it" description:"Tick to publish the draft."`
	Note     string `json:"note,omitempty" title:"Note to the author"`
}

// post sends a JSON body and decodes the JSON answer into out.
func post(url string, body string, out any) {
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		log.Fatal(err)
	}
}

// get decodes the JSON answer of a GET into out.
func get(url string, out any) {
	res, err := http.Get(url)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		log.Fatal(err)
	}
}

// Serve a graph that asks a person, run it over HTTP, answer the
// question and read the thread's status, runs and timeline. The console
// for people is at /inbox/ of the same handler.
func Example() {
	g, err := runtime.NewBuilder("approval").Channel("draft", "").Channel("published", "").
		TypedNode("write", "write", nil, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			return runtime.Values{"draft": "post about otters"}, nil
		}).
		TypedNode("review", "review", nil, func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			a, err := runtime.Interrupt[Approval](ctx, "Publish this draft?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"published": a.Approved}, nil
		}).
		Edge("__start__", "write").Edge("write", "review").Edge("review", "__end__").Compile()
	if err != nil {
		log.Fatal(err)
	}
	srv, err := server.New(server.Config{
		Graphs:       []server.Graph{server.Of(g)},
		Checkpointer: checkpoint.NewMemory(),
		Authenticate: server.Anonymous, // a trusted loopback server only
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close(context.Background())
	hs := httptest.NewServer(srv)
	defer hs.Close()

	var th server.ThreadView
	post(hs.URL+"/threads", `{"thread_id": "t1"}`, &th)
	fmt.Println("created:", th.Status)

	var run server.RunView
	post(hs.URL+"/threads/t1/runs", `{}`, &run)
	get(hs.URL+"/threads/t1/runs/"+run.RunID+"/wait", &run)
	fmt.Println("run:", run.Status, "asks", run.Pending[0].Node)
	fmt.Println("form label:", strings.Contains(string(run.Pending[0].Expects.Schema), `"title":"Publish it"`))

	post(hs.URL+"/threads/t1/resume", `{"answers": {"`+run.Pending[0].ID+`": {"approved": true}}}`, &run)
	get(hs.URL+"/threads/t1/runs/"+run.RunID+"/wait", &run)
	get(hs.URL+"/threads/t1", &th)
	fmt.Println("resume:", run.Status, "thread:", th.Status, string(th.Values))

	var runs server.RunList
	get(hs.URL+"/threads/t1/runs", &runs)
	for _, r := range runs.Runs {
		fmt.Println("run of the thread:", r.Kind, r.Status)
	}
	var hist struct{ Checkpoints []server.CheckpointView }
	get(hs.URL+"/threads/t1/history", &hist)
	for i := len(hist.Checkpoints) - 1; i >= 0; i-- {
		c := hist.Checkpoints[i]
		fmt.Println("step", c.Step, "ran", c.Nodes, "wrote", c.Writes)
	}
	// Output:
	// created: new
	// run: interrupted asks review
	// form label: true
	// resume: done thread: done {"draft":"post about otters","published":true}
	// run of the thread: resume done
	// run of the thread: run interrupted
	// step 0 ran [] wrote []
	// step 1 ran [write] wrote [draft]
	// step 1 ran [] wrote []
	// step 2 ran [review] wrote [published]
}
