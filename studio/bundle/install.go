package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// registry is where packages without a resolved URL in the lockfile come
// from (npm writes none when omit-lockfile-registry-resolved is set).
const registry = "https://registry.npmjs.org"

// ErrOffline reports that the npm registry could not be reached, so the
// lockfile's packages could not be installed; callers skip the bundle
// check with a notice unless CI=true.
var ErrOffline = errors.New("the npm registry is unreachable")

// lockPackage is one entry of package-lock.json's "packages" object.
type lockPackage struct {
	Version   string `json:"version"`
	Resolved  string `json:"resolved"`
	Integrity string `json:"integrity"`
	Link      bool   `json:"link"`
	Dev       bool   `json:"dev"`
}

// install makes the packages of the lockfile available without Node.js:
// it downloads each package's tarball from the npm registry, verifies its
// integrity (sha512, as package-lock.json records it) and extracts it into
// a cache directory keyed by the lockfile's hash. It returns the
// node_modules directory to resolve packages from. A finished cache is
// reused without the network.
func install(lockfile string) (string, error) {
	lock, err := os.ReadFile(lockfile)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", lockfile, err)
	}
	var parsed struct {
		Packages map[string]lockPackage `json:"packages"`
	}
	if err := json.Unmarshal(lock, &parsed); err != nil {
		return "", fmt.Errorf("%s is not a package-lock.json: %w", lockfile, err)
	}
	sum := sha256.Sum256(lock)
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, hex.EncodeToString(sum[:12]))
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(dir, "complete")); err == nil {
		return modules, nil
	}
	tmp, err := os.MkdirTemp(root, "install-")
	if err != nil {
		return "", fmt.Errorf("creating the package cache in %s: %w", root, err)
	}
	defer os.RemoveAll(tmp)
	keys := make([]string, 0, len(parsed.Packages))
	for key, p := range parsed.Packages {
		if key == "" || p.Link || p.Dev {
			continue
		}
		keys = append(keys, key)
	}
	sort.Strings(keys)
	client := &http.Client{Timeout: 2 * time.Minute}
	for _, key := range keys {
		if err := fetchPackage(client, key, parsed.Packages[key], tmp); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "complete"), lock, 0o644); err != nil {
		return "", err
	}
	os.RemoveAll(dir) // a half-finished directory from an older run
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "complete")); serr == nil {
			return modules, nil // another run finished first
		}
		return "", fmt.Errorf("moving the installed packages to %s: %w", dir, err)
	}
	return modules, nil
}

// cacheRoot is the directory that holds installed lockfiles: under the
// user's cache directory, or the temporary directory when there is none.
func cacheRoot() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	root := filepath.Join(base, "ilmek-studio-bundle")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("creating the package cache %s: %w (set XDG_CACHE_HOME to a writable directory)", root, err)
	}
	return root, nil
}

// tarballURL is where the registry serves a package's tarball:
// <registry>/<name>/-/<basename>-<version>.tgz.
func tarballURL(key string, p lockPackage) string {
	if p.Resolved != "" {
		return p.Resolved
	}
	name := key[strings.LastIndex(key, "node_modules/")+len("node_modules/"):]
	return registry + "/" + name + "/-/" + path.Base(name) + "-" + p.Version + ".tgz"
}

// fetchPackage downloads one package, checks its integrity and extracts it
// into dest/<key> (key is the lockfile's path, node_modules/...).
func fetchPackage(client *http.Client, key string, p lockPackage, dest string) error {
	want, ok := strings.CutPrefix(p.Integrity, "sha512-")
	if !ok {
		return fmt.Errorf("package-lock.json: %s has no sha512 integrity (%q): regenerate the lockfile with npm", key, p.Integrity)
	}
	url := tarballURL(key, p)
	resp, err := client.Get(url)
	if err != nil {
		var nerr net.Error
		var dnsErr *net.DNSError
		var opErr *net.OpError
		if errors.As(err, &dnsErr) || errors.As(err, &opErr) || (errors.As(err, &nerr) && nerr.Timeout()) {
			return fmt.Errorf("%w: fetching %s: %v", ErrOffline, url, err)
		}
		return fmt.Errorf("fetching %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching %s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("fetching %s: %w", url, err)
	}
	got := sha512.Sum512(data)
	if base64.StdEncoding.EncodeToString(got[:]) != want {
		return fmt.Errorf("%s: integrity mismatch for %s (the lockfile says sha512-%s): the registry's tarball is not the locked one", key, url, want)
	}
	return extract(data, filepath.Join(dest, filepath.FromSlash(key)))
}

// extract writes a package tarball's files into dir, dropping the first
// path component (package/ in tarballs npm publishes). Links and entries
// that would leave dir are refused.
func extract(tgz []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return fmt.Errorf("%s: tarball: %w", dir, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: tarball: %w", dir, err)
		}
		name := path.Clean(h.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("%s: tarball entry %q leaves the package directory", dir, h.Name)
		}
		_, rest, ok := strings.Cut(name, "/")
		if !ok || rest == "" {
			continue
		}
		target := filepath.Join(dir, filepath.FromSlash(rest))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			_, cerr := io.Copy(f, tr)
			if err := errors.Join(cerr, f.Close()); err != nil {
				return fmt.Errorf("%s: %w", target, err)
			}
		}
	}
}
