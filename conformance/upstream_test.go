package conformance

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// The reference's shared data reduce byte for byte (canonical JSON) to
// their expected.json: one test per family.
func TestUpstreamMCP(t *testing.T)    { testUpstream(t, UpstreamMCP) }
func TestUpstreamA2A(t *testing.T)    { testUpstream(t, UpstreamA2A) }
func TestUpstreamSkills(t *testing.T) { testUpstream(t, UpstreamSkills) }

func testUpstream(t *testing.T, family string) {
	dir := filepath.Join("testdata", "upstream", family)
	if got := UpstreamFamily(dir); got != family {
		t.Fatalf("UpstreamFamily(%s) = %q, want %q", dir, got, family)
	}
	c := &UpstreamCase{Dir: dir, Family: family}
	got, err := c.Reduce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.Want()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestUpstreamDirs(t *testing.T) {
	cases, err := LoadUpstreamDir(filepath.Join("testdata", "upstream"))
	if err != nil {
		t.Fatal(err)
	}
	var fams []string
	for _, c := range cases {
		fams = append(fams, c.Family)
	}
	if strings.Join(fams, ",") != "a2a,mcp,skills" {
		t.Errorf("families = %v, want a2a, mcp, skills", fams)
	}
	// A case directory is none of them, and LoadDir reads no case file
	// from an upstream one.
	if f := UpstreamFamily(filepath.Join("testdata", "cases")); f != "" {
		t.Errorf("testdata/cases is upstream family %q", f)
	}
	for _, fam := range fams {
		cs, err := LoadDir(filepath.Join("testdata", "upstream", fam))
		if err != nil || len(cs) != 0 {
			t.Errorf("LoadDir(upstream/%s) = %d cases, %v; want none", fam, len(cs), err)
		}
	}
	var out bytes.Buffer
	if rep := RunUpstream(context.Background(), &out, cases); rep.Passed != 3 || rep.Failed != 0 {
		t.Errorf("RunUpstream: %+v\n%s", rep, out.String())
	}
}
