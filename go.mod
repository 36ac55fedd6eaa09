module github.com/ilmek-go/ilmek

go 1.26.0

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)
