module github.com/ilmek-go/ilmek/a2ahttp

go 1.26.0

require github.com/ilmek-go/ilmek v0.0.0

require github.com/robfig/cron/v3 v3.0.1 // indirect

replace github.com/ilmek-go/ilmek => ../
