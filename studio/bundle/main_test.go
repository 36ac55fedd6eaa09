package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommittedBundle: the page in ../ui is what the sources build from
// the lockfile's packages (installed without Node.js), and building twice
// gives the same bytes. Offline it skips, unless CI=true.
func TestCommittedBundle(t *testing.T) {
	modules, err := install("package-lock.json")
	if errors.Is(err, ErrOffline) && os.Getenv("CI") != "true" {
		t.Skipf("skipping the bundle check: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	a, err := build(modules)
	if err != nil {
		t.Fatal(err)
	}
	b, err := build(modules)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs between two builds", name)
		}
		old, err := os.ReadFile(filepath.Join("..", "ui", name))
		if err != nil || !bytes.Equal(old, data) {
			t.Errorf("../ui/%s is not what the sources build (%v): run go generate ./studio and commit it", name, err)
		}
	}
}

// tgz builds a gzipped tarball of the given entries (name to contents).
func tgz(t *testing.T, entries map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(tw.Close(), zw.Close()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sri(data []byte) string {
	sum := sha512.Sum512(data)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// TestFetchPackage: a tarball is extracted only when its sha512 matches
// the lockfile's integrity, and entries that would leave the package
// directory are refused.
func TestFetchPackage(t *testing.T) {
	good := tgz(t, map[string]string{"package/index.js": "export default 1", "package/lib/a.js": "a"})
	escape := tgz(t, map[string]string{"package/../../evil.js": "x"})
	tests := []struct {
		name      string
		body      []byte
		integrity string
		wantErr   string
		wantFile  string
	}{
		{"verified", good, sri(good), "", "node_modules/p/lib/a.js"},
		{"tampered", good, sri([]byte("other")), "integrity mismatch", ""},
		{"no sha512", good, "sha1-abc", "no sha512 integrity", ""},
		{"escaping entry", escape, sri(escape), "leaves the package directory", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(tt.body) }))
			defer srv.Close()
			dest := t.TempDir()
			err := fetchPackage(srv.Client(), "node_modules/p", lockPackage{Version: "1.0.0", Resolved: srv.URL + "/p.tgz", Integrity: tt.integrity}, dest)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dest, tt.wantFile)); err != nil {
				t.Errorf("%s not extracted: %v", tt.wantFile, err)
			}
		})
	}
}

// TestTarballURL: without a resolved URL the registry's conventional
// tarball path is used, with the scope dropped from the file name.
func TestTarballURL(t *testing.T) {
	tests := []struct{ key, version, resolved, want string }{
		{"node_modules/react", "19.3.1", "", registry + "/react/-/react-19.3.1.tgz"},
		{"node_modules/@xyflow/react", "12.12.1", "", registry + "/@xyflow/react/-/react-12.12.1.tgz"},
		{"node_modules/a/node_modules/b", "2.0.0", "", registry + "/b/-/b-2.0.0.tgz"},
		{"node_modules/c", "1.0.0", "https://example.test/c.tgz", "https://example.test/c.tgz"},
	}
	for _, tt := range tests {
		if got := tarballURL(tt.key, lockPackage{Version: tt.version, Resolved: tt.resolved}); got != tt.want {
			t.Errorf("tarballURL(%s) = %s, want %s", tt.key, got, tt.want)
		}
	}
}
