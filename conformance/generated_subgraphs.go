package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/ilmek-go/ilmek/gen"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// caseKey identifies what the generated kind generates for c: its spec
// (specKey) and, for a case of ExtensionSubgraphs, its child documents.
func caseKey(c *Case) string {
	if len(c.Subgraphs) == 0 {
		return specKey(c.Spec)
	}
	h := sha256.New()
	h.Write([]byte(specKey(c.Spec)))
	for _, name := range slices.Sorted(maps.Keys(c.Subgraphs)) {
		fmt.Fprintf(h, "\x00%s\x00%s", name, specKey(c.Subgraphs[name]))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// generateChildren generates the child documents of src (a case of
// ExtensionSubgraphs) into packages g0, g1, ... (by document name) inside
// the directory of package name, each wired to the children its own
// subgraph nodes name, and returns them for gen.Options.Subgraphs, after
// checking doc's subgraph nodes and every child's against them as ilmekgen
// does (spec.CheckSubgraphs, spec.CheckSubgraphCycles). A document that is
// refused gives refused, as runtime.FromSpec's refusal would.
func generateChildren(dir, name string, src specSource, doc *spec.Graph) (pkgs map[string]gen.SubgraphPackage, refused []Observation, err error) {
	names := slices.Sorted(maps.Keys(src.subgraphs))
	docs := []*spec.Graph{doc}
	pkgs = map[string]gen.SubgraphPackage{}
	refuse := func(msg string, err error) []Observation {
		return Invalid(&runtime.SpecError{Msg: msg + err.Error(), Err: err})
	}
	for i, n := range names {
		child, diags := spec.Decode(src.file+"#subgraphs."+n, src.subgraphs[n])
		if err := diags.Err(); err != nil {
			return nil, refuse("", err), nil
		}
		if child.Name != n {
			return nil, Invalid(&runtime.SpecError{Msg: fmt.Sprintf("subgraphs.%s: the document is named %q", n, child.Name)}), nil
		}
		docs = append(docs, child)
		pkgs[n] = gen.SubgraphPackage{Path: fmt.Sprintf("%s/%s/g%d", tempModulePath, name, i), Doc: child}
	}
	if err := spec.CheckSubgraphCycles(docs...).Err(); err != nil {
		return nil, refuse("", err), nil
	}
	views := spec.SubgraphChildren(docs...)
	for _, d := range docs {
		own := maps.Clone(views)
		delete(own, d.Name)
		if err := spec.CheckSubgraphs(d, own).Err(); err != nil {
			return nil, refuse("", err), nil
		}
	}
	for i, n := range names {
		pkg := fmt.Sprintf("g%d", i)
		files, diags := gen.Generate(pkgs[n].Doc, gen.Options{Package: pkg, PkgPath: pkgs[n].Path, Source: "spec.json", Subgraphs: pkgs})
		if err := diags.Err(); err != nil {
			return nil, refuse("ilmekgen refuses subgraph "+n+": ", err), nil
		}
		pdir := filepath.Join(dir, name, pkg)
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return nil, nil, fmt.Errorf("generated kind: %w", err)
		}
		if err := writeFile(filepath.Join(pdir, "spec.json"), src.subgraphs[n]); err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			if err := writeFile(filepath.Join(pdir, f.Name), f.Data); err != nil {
				return nil, nil, err
			}
		}
	}
	return pkgs, nil, nil
}
