// Command bundle builds the studio's page: it bundles src/main.jsx with
// React and React Flow (@xyflow/react, from the npm registry, pinned by
// package-lock.json) using esbuild's Go API, and writes studio.js and
// studio.css into the studio's ui directory, which package studio embeds.
// It is a module of its own so that esbuild never enters the core module.
//
// Run it with go generate ./studio (or go run -C studio/bundle . -out ../ui).
// It needs no Node.js: it installs the lockfile's packages itself
// (install.go), fetching each tarball from the npm registry, verifying its
// sha512 integrity and extracting it into a cache directory that later runs
// reuse without the network. Offline it skips with a notice, unless CI=true.
//
// With -check it writes nothing and fails when the committed files differ
// from what it builds (CI runs it).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/evanw/esbuild/pkg/api"
)

func main() {
	out := flag.String("out", "../ui", "the directory to write studio.js and studio.css to")
	check := flag.Bool("check", false, "write nothing; fail when the files in -out differ from the build")
	flag.Parse()
	if err := run(*out, *check); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func run(out string, check bool) error {
	modules, err := install("package-lock.json")
	if errors.Is(err, ErrOffline) && os.Getenv("CI") != "true" {
		fmt.Fprintln(os.Stderr, "bundle: skipped, the studio's page was not built or checked:", err)
		return nil
	}
	if err != nil {
		return err
	}
	files, err := build(modules)
	if err != nil {
		return err
	}
	var stale []string
	for name, data := range files {
		path := filepath.Join(out, name)
		if check {
			old, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(old, data) {
				stale = append(stale, path)
			}
			continue
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("%v are not what the sources build: run go generate ./studio and commit them", stale)
	}
	return nil
}

// build bundles the page: an ES module, minified, for current browsers,
// with React's production build. Its output depends only on the sources
// and the installed packages (the lockfile), so it is reproducible.
// Packages resolve from modules, the directory install returns.
func build(modules string) (map[string][]byte, error) {
	res := api.Build(api.BuildOptions{
		EntryPoints:       []string{"src/main.jsx"},
		EntryNames:        "studio",
		Outdir:            "out",
		Bundle:            true,
		NodePaths:         []string{modules},
		Write:             false,
		Format:            api.FormatESModule,
		Target:            api.ES2022,
		Platform:          api.PlatformBrowser,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		JSX:               api.JSXAutomatic,
		Define:            map[string]string{"process.env.NODE_ENV": `"production"`},
		LegalComments:     api.LegalCommentsEndOfFile,
		Charset:           api.CharsetUTF8,
		LogLevel:          api.LogLevelWarning,
	})
	if len(res.Errors) > 0 {
		msgs := api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		return nil, fmt.Errorf("esbuild: %d errors:\n%s", len(res.Errors), msgs)
	}
	files := map[string][]byte{}
	for _, f := range res.OutputFiles {
		files[filepath.Base(f.Path)] = f.Contents
	}
	if files["studio.js"] == nil || files["studio.css"] == nil {
		return nil, fmt.Errorf("esbuild wrote %d files, want studio.js and studio.css", len(files))
	}
	return files, nil
}
