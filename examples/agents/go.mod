module github.com/ilmek-go/ilmek/examples/agents

go 1.26.0

require (
	github.com/ilmek-go/ilmek v0.0.0
	github.com/ilmek-go/ilmek/a2ahttp v0.0.0
	github.com/ilmek-go/ilmek/mcpsdk v0.0.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
)

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

replace (
	github.com/ilmek-go/ilmek => ../..
	github.com/ilmek-go/ilmek/a2ahttp => ../../a2ahttp
	github.com/ilmek-go/ilmek/mcpsdk => ../../mcpsdk
)
