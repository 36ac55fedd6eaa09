package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// output prints a command's result: v as indented JSON with --json, or
// what the table function writes for people.
type output struct {
	w    io.Writer
	json bool
}

// print writes v as JSON, or calls human with a tab writer whose columns
// it aligns.
func (o *output) print(v any, human func(w io.Writer)) error {
	if o.json {
		enc := json.NewEncoder(o.w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	tw := tabwriter.NewWriter(o.w, 0, 4, 2, ' ', 0)
	human(tw)
	return tw.Flush()
}

// when formats a time for a table: UTC to the second, "-" for none.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// short cuts s to n runes for a table cell, on one line.
func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// indentJSON is raw as indented JSON, each line prefixed; raw itself when
// it does not parse.
func indentJSON(raw []byte, prefix string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, prefix, "  "); err != nil {
		return prefix + string(raw)
	}
	return prefix + b.String()
}

// orDash is s, or "-" when empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// list joins ss with ", ", "-" for none.
func list(ss []string) string { return orDash(strings.Join(ss, ", ")) }

// pairs formats metadata as k=v, sorted by key.
func pairs(m map[string]string, keys []string) string {
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%s", k, m[k])
	}
	return orDash(b.String())
}

// internalMeta starts the metadata keys ilmek keeps itself: the server's
// (the thread's graph, creation time, id and latest runs) and the
// schedules' (checkpoint.MetaSchedule, checkpoint.MetaTick). The server's
// API hides them; so do the tables, and --json keeps them.
const internalMeta = "ilmek."

// userMeta formats a thread's metadata for a table, as pairs does,
// without the keys that start with internalMeta.
func userMeta(m map[string]string) string {
	var keys []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !strings.HasPrefix(k, internalMeta) {
			keys = append(keys, k)
		}
	}
	return pairs(m, keys)
}
