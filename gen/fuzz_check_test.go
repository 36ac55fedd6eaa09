package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/tools/go/packages"

	"github.com/ilmek-go/ilmek/spec"
)

// This file holds the checks that every package ilmekgen generates must
// pass, shared by FuzzGenerate, TestPredfuzzSpec (the predicate probe
// package, with bound channels) and the hostile corpus tests
// (hostile_test.go). checkGenerated runs them all:
//
//   - each file starts with the fixed header, parses, and is gofmt-stable;
//   - the package type-checks with go/types against the real runtime and
//     spec packages (loaded once per process with go/packages) and imports
//     only the packages the generator may write (generatorImports);
//   - its declarations are exactly those the generator intends for the
//     document, derived from the document through GoName (expectedDecls),
//     and every local it declares is one of localNames;
//   - comments are // comments of printable text only, so no document text
//     can end one or hide code (line breaks, U+2028, bidi controls);
//   - every fmt format string has as many verbs as arguments, so no
//     document text became part of a format;
//   - the embedded document (specJSON) decodes to a document equal to the
//     source (node ids and types and the graph's name reach the code that
//     way), and every channel name and config string is present as the
//     exact value of a string literal;
//   - document strings shape no code: the same document with every string
//     replaced by a neutral canary (canaryGraph) generates a package whose
//     syntax tree is the same once string literals, comments and struct
//     tags are ignored and the identifiers GoName derives from document
//     names are compared by what they name (checkSkeleton).

// generatorImports are the packages generated code may import when no type
// is bound; bindings add their own packages (time, for the predicate
// probe's time.Duration channel).
var generatorImports = []string{
	"encoding/json", "fmt", "maps", "math", "slices", "strconv",
	runtimePath, specPath, genimplPath,
}

// checkerImports are the packages the checker loads: generatorImports and
// the packages the tests in this directory bind.
var checkerImports = append(slices.Clone(generatorImports), "time")

// typeEnv is the type information of every package generated code may
// import, loaded once per process.
type typeEnv struct {
	pkgs map[string]*types.Package
	mu   sync.Mutex // serializes type-checking against the shared packages
}

var loadTypeEnv = sync.OnceValues(func() (*typeEnv, error) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedImports | packages.NeedDeps, Dir: ".."}
	roots, err := packages.Load(cfg, checkerImports...)
	if err != nil {
		return nil, fmt.Errorf("loading %v for the type checker: %v", checkerImports, err)
	}
	env := &typeEnv{pkgs: map[string]*types.Package{}}
	var errs []string
	packages.Visit(roots, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
		if p.Types != nil {
			env.pkgs[p.PkgPath] = p.Types
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("the packages generated code imports do not build:\n%s", strings.Join(errs, "\n"))
	}
	return env, nil
})

// typeEnvFor returns the loaded packages or fails the test.
func typeEnvFor(t testing.TB) *typeEnv {
	t.Helper()
	env, err := loadTypeEnv()
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// genPackage is a generated package parsed and type-checked.
type genPackage struct {
	fset  *token.FileSet
	files []*ast.File // with comments, in the order of FileNames
	names []string
	pkg   *types.Package
	info  *types.Info
}

// parseAndCheck parses and type-checks generated files. allowed are the
// import paths the files may use.
func parseAndCheck(env *typeEnv, opts Options, files []File, allowed []string) (*genPackage, error) {
	gp := &genPackage{fset: token.NewFileSet()}
	for _, f := range files {
		af, err := parser.ParseFile(gp.fset, f.Name, f.Data, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("%s does not parse: %v", f.Name, err)
		}
		gp.files = append(gp.files, af)
		gp.names = append(gp.names, f.Name)
	}
	var typeErrs []string
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if !slices.Contains(allowed, path) {
				return nil, fmt.Errorf("generated code imports %q, which the generator never writes (allowed: %q)", path, allowed)
			}
			if p := env.pkgs[path]; p != nil {
				return p, nil
			}
			return nil, fmt.Errorf("the checker did not load %q; add it to checkerImports", path)
		}),
		Error: func(err error) {
			if len(typeErrs) < 10 {
				typeErrs = append(typeErrs, err.Error())
			}
		},
	}
	gp.info = &types.Info{
		Defs:  map[*ast.Ident]types.Object{},
		Uses:  map[*ast.Ident]types.Object{},
		Types: map[ast.Expr]types.TypeAndValue{},
	}
	path := opts.PkgPath
	if path == "" {
		path = "example.com/" + opts.Package
	}
	env.mu.Lock()
	gp.pkg, _ = conf.Check(path, gp.fset, gp.files, gp.info)
	env.mu.Unlock()
	if len(typeErrs) > 0 {
		return nil, fmt.Errorf("the generated package does not type-check:\n\t%s", strings.Join(typeErrs, "\n\t"))
	}
	return gp, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// checkOptions say which checks checkGenerated runs.
type checkOptions struct {
	// imports are the packages the generated code may import besides
	// generatorImports (those of bound types).
	imports []string
	// noCanary skips the skeleton comparison (for packages with bindings,
	// whose guards depend on the literals they compare).
	noCanary bool
}

// checkGenerated runs every check of this file on the files generated for
// g with opts, and reports each failure naming the file and the fix.
func checkGenerated(t testing.TB, g *spec.Graph, opts Options, files []File, co checkOptions) *genPackage {
	t.Helper()
	if len(files) != len(FileNames) {
		t.Fatalf("Generate returned %d files, want %v", len(files), FileNames)
	}
	for i, f := range files {
		if f.Name != FileNames[i] {
			t.Fatalf("file %d is %s, want %s", i, f.Name, FileNames[i])
		}
		src := opts.Source
		if src == "" {
			src = "(unknown)"
		}
		header := "// " + Header + "\n" + sanitizeLine("// Source: "+src) + "\n"
		if !bytes.HasPrefix(f.Data, []byte(header)) {
			first, _, _ := bytes.Cut(f.Data, []byte("\n\n"))
			t.Errorf("%s does not start with the fixed header %q but with:\n%s", f.Name, header, first)
		}
		formatted, err := format.Source(f.Data)
		if err != nil {
			t.Fatalf("%s does not parse: %v\n%s", f.Name, err, numbered(f.Data))
		}
		if !bytes.Equal(formatted, f.Data) {
			t.Errorf("%s is not gofmt-stable: render in Generate must format what it returns", f.Name)
		}
	}
	env := typeEnvFor(t)
	gp, err := parseAndCheck(env, opts, files, append(slices.Clone(generatorImports), co.imports...))
	if err != nil {
		t.Fatalf("%v\nin the package generated from %s", err, opts.Source)
	}
	for i, f := range gp.files {
		if !ast.IsGenerated(f) {
			t.Errorf("%s: ast.IsGenerated does not recognise the header", gp.names[i])
		}
	}
	checkComments(t, gp)
	checkDecls(t, g, gp)
	checkFormats(t, gp)
	checkLiterals(t, g, gp)
	if !co.noCanary {
		checkSkeleton(t, g, opts, gp)
	}
	return gp
}

// checkComments fails on a /* */ comment or a comment holding a rune that
// is not printable: every document string must reach a comment Go-quoted
// (quote) or escaped (sanitizeLine), so that none can end the comment or
// reorder what a reader sees (line and paragraph separators, bidi
// controls, NUL, escape sequences).
func checkComments(t testing.TB, gp *genPackage) {
	t.Helper()
	for i, f := range gp.files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				pos := gp.fset.Position(c.Pos())
				if !strings.HasPrefix(c.Text, "//") {
					t.Errorf("%s:%d: block comment %q; the generator writes only // comments", gp.names[i], pos.Line, c.Text)
					continue
				}
				for _, r := range c.Text {
					if r != ' ' && r != '\t' && !strconv.IsPrint(r) {
						t.Errorf("%s:%d: comment holds the unprintable rune %U, so document text reaches it raw: %q; quote it (quote) or pass the line through sanitizeLine", gp.names[i], pos.Line, r, c.Text)
						break
					}
				}
			}
		}
	}
}

// declKey names one declaration: "type State", "const NodeA", "var shape",
// "func New", "method State.HasX", "field State.X".
type declKey = string

// declsOf lists the declarations of a package: top-level names, methods
// by receiver, struct fields and interface methods by type.
func declsOf(gp *genPackage) map[declKey]bool {
	out := map[declKey]bool{}
	for _, f := range gp.files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					out["func "+d.Name.Name] = true
					continue
				}
				recv := d.Recv.List[0].Type
				if s, ok := recv.(*ast.StarExpr); ok {
					recv = s.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					out["method "+id.Name+"."+d.Name.Name] = true
				} else {
					out[fmt.Sprintf("method %T.%s", recv, d.Name.Name)] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						out["type "+s.Name.Name] = true
						switch tt := s.Type.(type) {
						case *ast.StructType:
							for _, fl := range tt.Fields.List {
								if len(fl.Names) == 0 {
									out["field "+s.Name.Name+".(embedded)"] = true
								}
								for _, n := range fl.Names {
									out["field "+s.Name.Name+"."+n.Name] = true
								}
							}
						case *ast.InterfaceType:
							for _, fl := range tt.Methods.List {
								for _, n := range fl.Names {
									out["method "+s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[d.Tok.String()+" "+n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}

// internalDecls are the unexported declarations the generator may write,
// whatever the document: helpers a package gets only when a feature needs
// them are listed too. guard<N> variables are checked separately.
var internalDecls = map[declKey]bool{
	"const _": true, "const specJSON": true,
	"var shape": true, "var specDoc": true, "var adapter": true,
	"type program": true, "type registryNodes": true,
	"method State.apply": true, "method State.values": true, "method registryNodes.build": true,
	"field State.set": true, "field Update.bad": true, "field Update.null": true, "field program.nodes": true,
	"field program.(embedded)": true,
}

// requiredInternal are the internal declarations the checks below rely on.
var requiredInternal = []declKey{"const specJSON"}

// docNames are the identifiers GoName derives from the document, in the
// generator's orders: channels by name, nodes in document order, node
// types by method name, and each type's config keys by key.
type docNames struct {
	chans []string // GoName of each channel
	nodes []string // GoSuffix("Node", id) of each node id: its constant
	types []string // distinct node types, sorted by method
	// methods and keys are per entry of types.
	methods []string
	keys    [][]string // GoName of each config key, sorted by key
}

// namesOf converts every name of g with GoName. It reports false when a
// name has no Go name (the generator must then have refused g).
func namesOf(g *spec.Graph) (docNames, bool) {
	var dn docNames
	for _, c := range g.Channels {
		id, err := GoName(c.Name)
		if err != nil {
			return dn, false
		}
		dn.chans = append(dn.chans, id)
	}
	byType := map[string][]map[string]any{}
	var order []string
	for _, n := range g.Nodes {
		id, err := GoSuffix("Node", n.ID)
		if err != nil {
			return dn, false
		}
		dn.nodes = append(dn.nodes, id)
		if _, ok := byType[n.Type]; !ok {
			order = append(order, n.Type)
			byType[n.Type] = nil
		}
		if len(n.Config) > 0 {
			if v, err := decodeJSON(n.Config); err == nil {
				if obj, ok := v.(map[string]any); ok {
					byType[n.Type] = append(byType[n.Type], obj)
				}
			}
		}
	}
	type typ struct{ name, method string }
	var ts []typ
	for _, name := range order {
		m, err := GoName(name)
		if err != nil {
			return dn, false
		}
		ts = append(ts, typ{name, m})
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].method < ts[j].method })
	for _, tp := range ts {
		dn.types = append(dn.types, tp.name)
		dn.methods = append(dn.methods, tp.method)
		keys := map[string]bool{}
		for _, obj := range byType[tp.name] {
			for k := range obj {
				keys[k] = true
			}
		}
		var fields []string
		for _, k := range sortedKeys(keys) {
			f, err := GoName(k)
			if err != nil {
				return dn, false
			}
			fields = append(fields, f)
		}
		dn.keys = append(dn.keys, fields)
	}
	return dn, true
}

// expectedDecls is the exact set of exported declarations (and of
// declarations named after document names) that the generated package of
// g declares: the API doc.go describes, derived from g through GoName.
// Config types of node types bound with --config are absent (bound).
func expectedDecls(g *spec.Graph, dn docNames, bound map[string]bool) map[declKey]bool {
	want := map[declKey]bool{}
	add := func(keys ...string) {
		for _, k := range keys {
			want[k] = true
		}
	}
	add("type NodeID", "type State", "type Update", "type Target", "type Node", "type Nodes", "type Graph",
		"const End", "func To", "func Send", "func SendState", "func New", "func Adapt", "func FromRegistry", "func UpdateOf",
		"method NodeID.String", "method State.With", "method State.MarshalJSON", "method State.UnmarshalJSON",
		"method Update.MarshalJSON", "method Update.UnmarshalJSON", "field Update.Goto",
		"method program.Reduce", "method program.Plan", "method program.Run", "method program.EncodeWrites")
	for i, c := range g.Channels {
		f := dn.chans[i]
		add("const Channel"+f, "field State."+f, "field Update."+f)
		if c.Kind() == spec.LastWrite {
			add("method State.Has" + f)
		}
	}
	for i, n := range dn.nodes {
		add("const " + n)
		if g.Nodes[i].Goto != nil {
			f := strings.TrimPrefix(n, "Node")
			add("type "+f+"Goto", "var "+f+"Gotos", "field "+f+"Goto.node", "field "+f+"Goto.set",
				"method "+f+"Goto.To", "method "+f+"Goto.Send", "method "+f+"Goto.SendState")
		}
	}
	for i, m := range dn.methods {
		add("method Nodes."+m, "method registryNodes."+m)
		if bound[dn.types[i]] {
			continue
		}
		add("type " + m + "Config")
		for _, k := range dn.keys[i] {
			add("field " + m + "Config." + k)
		}
	}
	return want
}

// isDocDerived reports whether a declaration key must be in expectedDecls:
// an exported name, or any member of an exported type (State's and
// Update's fields, the config structs, Nodes) but the fixed unexported
// ones of internalDecls.
func isDocDerived(k declKey) bool {
	_, name, _ := strings.Cut(k, " ")
	if owner, member, ok := strings.Cut(name, "."); ok {
		if internalDecls[k] {
			return false
		}
		return token.IsExported(owner) || token.IsExported(member)
	}
	return token.IsExported(name)
}

// checkDecls compares the declarations of gp with those g calls for, and
// checks that every local name the generated functions declare is one of
// the generator's (localNames), so no document text declares anything.
func checkDecls(t testing.TB, g *spec.Graph, gp *genPackage) {
	t.Helper()
	dn, ok := namesOf(g)
	if !ok {
		t.Errorf("the generator accepted a document with a name GoName refuses")
		return
	}
	checkDeclSet(t, g, gp, expectedDecls(g, dn, nil))
}

// checkDeclSet is checkDecls with the expected set given.
func checkDeclSet(t testing.TB, g *spec.Graph, gp *genPackage, want map[declKey]bool) {
	t.Helper()
	got := declsOf(gp)
	guards := map[string]bool{}
	for i, e := range g.Edges {
		if e.When != nil {
			guards[fmt.Sprintf("var guard%d", i)] = true
		}
	}
	var missing, extra []string
	for k := range want {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	for k := range got {
		switch {
		case want[k]:
		case isDocDerived(k):
			extra = append(extra, k)
		case !internalDecls[k] && !guards[k]:
			extra = append(extra, k)
		}
	}
	for _, k := range requiredInternal {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("the generated package lacks declarations the document calls for: %q", missing)
	}
	if len(extra) > 0 {
		t.Errorf("the generated package declares what the generator does not intend: %q (a new generated name belongs in expectedDecls or internalDecls in gen/fuzz_check_test.go)", extra)
	}
	// Locals: parameters, results, variables and type parameters.
	for id, obj := range gp.info.Defs {
		if obj == nil || obj.Parent() == gp.pkg.Scope() || id.Name == "_" {
			continue
		}
		switch o := obj.(type) {
		case *types.Var:
			if o.IsField() {
				continue
			}
		case *types.Func:
			continue // methods, checked above
		case *types.PkgName:
			continue
		case *types.TypeName:
			if _, ok := o.Type().(*types.TypeParam); !ok {
				continue
			}
		}
		if !localNames[id.Name] && !typeParamNames[id.Name] {
			t.Errorf("%s: the generated code declares the local %q, which is not in localNames (gen/generate.go); add it there so that binding packages are imported around it", gp.fset.Position(id.Pos()), id.Name)
		}
	}
}

// typeParamNames are the type parameters of the generated helpers.
var typeParamNames = map[string]bool{"M": true, "V": true, "T": true, "E": true, "F": true}

// checkFormats counts the verbs of every constant format string passed to
// fmt.Errorf and fmt.Sprintf and compares them with the arguments: a
// mismatch means document text (a "%" in a name) became part of a format.
func checkFormats(t testing.TB, gp *genPackage) {
	t.Helper()
	var problems []string
	for i, f := range gp.files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			fn, ok := gp.info.Uses[sel.Sel].(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "fmt" || (fn.Name() != "Errorf" && fn.Name() != "Sprintf") {
				return true
			}
			tv, ok := gp.info.Types[call.Args[0]]
			if !ok || tv.Value == nil {
				problems = append(problems, fmt.Sprintf("%s:%d: fmt.%s with a format that is not a constant", gp.names[i], gp.fset.Position(call.Pos()).Line, fn.Name()))
				return true
			}
			format := constantString(tv)
			if verbs := countVerbs(format); verbs != len(call.Args)-1 {
				problems = append(problems, fmt.Sprintf("%s:%d: fmt.%s format %q has %d verbs for %d arguments: document text reached a format string; pass it as an argument", gp.names[i], gp.fset.Position(call.Pos()).Line, fn.Name(), format, verbs, len(call.Args)-1))
			}
			return true
		})
	}
	for _, p := range problems {
		t.Error(p)
	}
}

func constantString(tv types.TypeAndValue) string {
	s, err := strconv.Unquote(tv.Value.ExactString())
	if err != nil {
		return tv.Value.ExactString()
	}
	return s
}

// countVerbs counts the verbs of a fmt format: "%%" is none, every other
// "%" with its flags, width and precision is one.
func countVerbs(format string) int {
	n := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0123456789.", format[i]) >= 0 {
			i++
		}
		if i < len(format) && format[i] == '%' {
			continue
		}
		n++
	}
	return n
}

// stringLits returns the value of every string literal of gp.
func stringLits(gp *genPackage) map[string]bool {
	out := map[string]bool{}
	for _, f := range gp.files {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					out[s] = true
				}
			}
			return true
		})
	}
	return out
}

// constValue returns the value of the string constant name.
func constValue(gp *genPackage, name string) (string, bool) {
	c, ok := gp.pkg.Scope().Lookup(name).(*types.Const)
	if !ok {
		return "", false
	}
	s, err := strconv.Unquote(c.Val().ExactString())
	return s, err == nil
}

// checkLiterals checks that the document's strings reach the code as
// literals with their exact values: the embedded document decodes equal to
// g, each channel constant holds its channel's name, and every channel
// name and config string (values and nested keys) is the exact value of
// some string literal.
func checkLiterals(t testing.TB, g *spec.Graph, gp *genPackage) {
	t.Helper()
	doc, ok := constValue(gp, "specJSON")
	if !ok {
		t.Errorf("the generated package has no string constant specJSON")
	} else {
		back, ds := spec.Decode("specJSON", []byte(doc))
		switch {
		case ds.HasErrors():
			t.Errorf("the embedded document does not decode: %v", ds.Errors())
		case !spec.Equal(g, back):
			t.Errorf("the embedded document differs from the source:\n%s\nsource:\n%s", back.Encode(), g.Encode())
		}
	}
	dn, ok := namesOf(g)
	if !ok {
		return
	}
	for i, c := range g.Channels {
		if v, ok := constValue(gp, "Channel"+dn.chans[i]); ok && v != c.Name {
			t.Errorf("constant Channel%s is %q, want the channel's name %q", dn.chans[i], v, c.Name)
		}
	}
	lits := stringLits(gp)
	need := func(what, s string) {
		if !lits[s] {
			t.Errorf("%s %q is not the value of any string literal of the generated package", what, s)
		}
	}
	for _, c := range g.Channels {
		need("channel name", c.Name)
	}
	// Node ids and types and the graph's name reach the code through the
	// embedded document, checked above (the shape is derived from it).
	for _, n := range g.Nodes {
		if len(n.Config) == 0 {
			continue
		}
		v, err := decodeJSON(n.Config)
		if err != nil {
			continue
		}
		obj, _ := v.(map[string]any)
		for _, top := range obj {
			if top != nil {
				walkStrings(top, func(s string) { need("config string", s) })
			}
		}
	}
}

// walkStrings calls fn for every string value and object key in v.
func walkStrings(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case []any:
		for _, e := range v {
			walkStrings(e, fn)
		}
	case map[string]any:
		for k, e := range v {
			fn(k)
			walkStrings(e, fn)
		}
	}
}

// canaryGraph returns g with every string the document holds replaced by a
// neutral one: channel i becomes c0000i, node i n0000i, node types
// t0000j in the order of their Go names, config keys k0000k in key order
// (at every depth), string values and predicate strings s0000n, unknown
// members x-0000m, the graph name "canary". Kinds, numbers (with their
// text), structure and every order the generator sorts by are kept, so
// the generated code may differ only where strings are: in literals,
// comments, tags and the identifiers GoName derives.
func canaryGraph(g *spec.Graph) *spec.Graph {
	c := &spec.Graph{NameKind: g.NameKind, Extra: canaryExtra(g.Extra)}
	if g.NameKind == spec.Set || g.Name != "" {
		c.Name = "canary"
	}
	chans := map[string]string{}
	if g.Channels != nil {
		c.Channels = make([]spec.Channel, len(g.Channels))
	}
	for i, ch := range g.Channels {
		chans[ch.Name] = fmt.Sprintf("c%05d", i)
		c.Channels[i] = spec.Channel{Name: chans[ch.Name], Reducer: ch.Reducer, Extra: canaryExtra(ch.Extra)}
	}
	// Node types in the order of their methods.
	var typeNames []string
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		if !seen[n.Type] {
			seen[n.Type] = true
			typeNames = append(typeNames, n.Type)
		}
	}
	method := func(s string) string {
		m, err := GoName(s)
		if err != nil {
			return s
		}
		return m
	}
	sort.SliceStable(typeNames, func(i, j int) bool { return method(typeNames[i]) < method(typeNames[j]) })
	typesMap := map[string]string{}
	for i, tn := range typeNames {
		typesMap[tn] = fmt.Sprintf("t%05d", i)
	}
	// Config keys at every depth, in key order.
	keySet := map[string]bool{}
	configs := make([]any, len(g.Nodes))
	for i, n := range g.Nodes {
		if len(n.Config) == 0 {
			continue
		}
		v, err := decodeJSON(n.Config)
		if err != nil {
			continue
		}
		configs[i] = v
		walkKeys(v, func(k string) { keySet[k] = true })
	}
	keys := map[string]string{}
	for i, k := range sortedKeys(keySet) {
		keys[k] = fmt.Sprintf("k%05d", i)
	}
	strs := map[string]string{}
	str := func(s string) string {
		if r, ok := strs[s]; ok {
			return r
		}
		strs[s] = fmt.Sprintf("s%05d", len(strs))
		return strs[s]
	}
	ids := map[string]string{spec.Start: spec.Start, spec.End: spec.End}
	if g.Nodes != nil {
		c.Nodes = make([]spec.Node, len(g.Nodes))
	}
	for i, n := range g.Nodes {
		ids[n.ID] = fmt.Sprintf("n%05d", i)
		cn := spec.Node{ID: ids[n.ID], Type: typesMap[n.Type], Extra: canaryExtra(n.Extra)}
		switch {
		case n.Config == nil:
		case configs[i] == nil:
			cn.Config = json.RawMessage("null")
		default:
			data, err := json.Marshal(canaryValue(configs[i], keys, str))
			if err != nil {
				panic(fmt.Sprintf("canaryGraph: config of node %d: %v", i, err))
			}
			cn.Config = data
		}
		c.Nodes[i] = cn
	}
	for i, n := range g.Nodes {
		if n.Goto == nil {
			continue
		}
		c.Nodes[i].Goto = make([]string, len(n.Goto))
		for j, to := range n.Goto {
			c.Nodes[i].Goto[j] = ids[to]
		}
	}
	if g.Edges != nil {
		c.Edges = make([]spec.Edge, len(g.Edges))
	}
	lit := func(l spec.Literal) spec.Literal {
		if l.Kind == spec.LitString {
			l.Str = str(l.Str)
		}
		return l
	}
	for i, e := range g.Edges {
		ce := spec.Edge{From: ids[e.From], To: ids[e.To], Extra: canaryExtra(e.Extra)}
		if e.When != nil {
			p := &spec.Predicate{Channel: chans[e.When.Channel], Op: e.When.Op, Value: lit(e.When.Value), Extra: canaryExtra(e.When.Extra)}
			if e.When.Values != nil {
				p.Values = make([]spec.Literal, len(e.When.Values))
				for j, l := range e.When.Values {
					p.Values[j] = lit(l)
				}
			}
			ce.When = p
		}
		c.Edges[i] = ce
	}
	return c
}

// canaryExtra replaces unknown members by neutral ones.
func canaryExtra(e spec.Extra) spec.Extra {
	if e == nil {
		return nil
	}
	out := spec.Extra{}
	for i := range e.Keys() {
		out[fmt.Sprintf("x-%05d", i)] = json.RawMessage(`"x"`)
	}
	return out
}

// walkKeys calls fn for every object key in v.
func walkKeys(v any, fn func(string)) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			walkKeys(e, fn)
		}
	case map[string]any:
		for k, e := range v {
			fn(k)
			walkKeys(e, fn)
		}
	}
}

// canaryValue rewrites the keys and strings of a decoded config.
func canaryValue(v any, keys map[string]string, str func(string) string) any {
	switch v := v.(type) {
	case string:
		return str(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = canaryValue(e, keys, str)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[keys[k]] = canaryValue(e, keys, str)
		}
		return out
	}
	return v
}

// roles maps each object whose name GoName derives from a document name to
// what it stands for ("channel 3 field", "node 0 const", ...), so that two
// packages generated from documents with different names compare equal
// when they declare and use the same things.
func roles(gp *genPackage, g *spec.Graph) map[types.Object]string {
	out := map[types.Object]string{}
	dn, ok := namesOf(g)
	if !ok || gp.pkg == nil {
		return out
	}
	scope := gp.pkg.Scope()
	named := func(name string) *types.Named {
		tn, _ := scope.Lookup(name).(*types.TypeName)
		if tn == nil {
			return nil
		}
		n, _ := tn.Type().(*types.Named)
		return n
	}
	member := func(n *types.Named, name, role string) {
		if n == nil {
			return
		}
		if obj, _, _ := types.LookupFieldOrMethod(n, true, gp.pkg, name); obj != nil {
			out[obj] = role
		}
	}
	set := func(obj types.Object, role string) {
		if obj != nil {
			out[obj] = role
		}
	}
	state, update := named("State"), named("Update")
	for i, f := range dn.chans {
		set(scope.Lookup("Channel"+f), fmt.Sprintf("channel#%d.const", i))
		member(state, f, fmt.Sprintf("channel#%d.field", i))
		member(update, f, fmt.Sprintf("channel#%d.update", i))
		member(state, "Has"+f, fmt.Sprintf("channel#%d.has", i))
	}
	for i, n := range dn.nodes {
		set(scope.Lookup(n), fmt.Sprintf("node#%d.const", i))
		if g.Nodes[i].Goto == nil {
			continue
		}
		f := strings.TrimPrefix(n, "Node")
		set(scope.Lookup(f+"Goto"), fmt.Sprintf("node#%d.goto", i))
		gotos := scope.Lookup(f + "Gotos")
		set(gotos, fmt.Sprintf("node#%d.gotos", i))
		if gotos == nil {
			continue
		}
		if st, ok := gotos.Type().(*types.Struct); ok {
			for k := range st.NumFields() {
				set(st.Field(k), fmt.Sprintf("node#%d.gotos.%d", i, k))
			}
		}
	}
	nodes, reg := named("Nodes"), named("registryNodes")
	for i, m := range dn.methods {
		member(nodes, m, fmt.Sprintf("type#%d.method", i))
		member(reg, m, fmt.Sprintf("type#%d.registry", i))
		cfg := named(m + "Config")
		set(scope.Lookup(m+"Config"), fmt.Sprintf("type#%d.config", i))
		for k, key := range dn.keys[i] {
			member(cfg, key, fmt.Sprintf("type#%d.key#%d", i, k))
		}
	}
	return out
}

// skelToken is one element of a syntax tree's skeleton.
type skelToken struct {
	text string
	pos  token.Pos
}

// skeleton flattens a file's syntax tree, leaving out what document text
// may change: string literal values, comments and struct tags; identifiers
// with a role are replaced by it.
func skeleton(gp *genPackage, f *ast.File, role map[types.Object]string) []skelToken {
	var out []skelToken
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case nil:
			return false
		case *ast.CommentGroup, *ast.Comment:
			return false
		case *ast.Field:
			out = append(out, skelToken{"Field", n.Pos()})
			for _, id := range n.Names {
				ast.Inspect(id, visit)
			}
			ast.Inspect(n.Type, visit) // not the tag
			return false
		case *ast.Ident:
			text := "ident " + n.Name
			if obj := gp.info.ObjectOf(n); obj != nil {
				if r, ok := role[obj]; ok {
					text = "role " + r
				}
			}
			out = append(out, skelToken{text, n.Pos()})
			return false
		case *ast.BasicLit:
			text := "lit " + n.Kind.String()
			if n.Kind != token.STRING {
				text += " " + n.Value
			}
			out = append(out, skelToken{text, n.Pos()})
			return false
		}
		out = append(out, skelToken{fmt.Sprintf("%T", n), n.Pos()})
		return true
	}
	ast.Inspect(f, visit)
	return out
}

// checkSkeleton generates the canary copy of g and compares the skeletons
// of the two packages: a difference is code that a document string shaped.
func checkSkeleton(t testing.TB, g *spec.Graph, opts Options, gp *genPackage) {
	t.Helper()
	c := canaryGraph(g)
	files, ds := Generate(c, opts)
	if ds.HasErrors() {
		t.Fatalf("the canary copy of an accepted document is refused, so generation depends on document text beyond GoName:\n%v\ncanary:\n%s", ds.Errors(), c.Encode())
	}
	cp, err := parseAndCheck(typeEnvFor(t), opts, files, generatorImports)
	if err != nil {
		t.Fatalf("canary copy: %v", err)
	}
	ra, rb := roles(gp, g), roles(cp, c)
	for i := range gp.files {
		a, b := skeleton(gp, gp.files[i], ra), skeleton(cp, cp.files[i], rb)
		n := min(len(a), len(b))
		for j := 0; j <= n; j++ {
			if j < n && a[j].text == b[j].text {
				continue
			}
			if j == n && len(a) == len(b) {
				break
			}
			where, got, want := "end of file", "(end)", "(end)"
			if j < len(a) {
				where, got = gp.fset.Position(a[j].pos).String(), a[j].text
			}
			if j < len(b) {
				want = b[j].text
			}
			t.Errorf("%s: document text shaped the code: the tree has %q where the canary copy has %q; some document string reaches the source outside a literal, a comment or GoName", where, got, want)
			break
		}
	}
}

// checkDiagnostics checks the diagnostics of a refused document: each is
// an error or warning with a message, placed in the document (line and
// column), and holds only printable text, so no document string reaches a
// terminal raw.
func checkDiagnostics(t testing.TB, ds spec.Diagnostics) {
	t.Helper()
	for _, d := range ds {
		if d.Message == "" {
			t.Errorf("diagnostic without message: %+v", d)
		}
		if d.Pos.Line < 1 || d.Pos.Col < 1 {
			t.Errorf("diagnostic not placed in the document: %+v", d)
		}
		for what, s := range map[string]string{"message": d.Message, "hint": d.Hint, "path": d.Path} {
			if !utf8.ValidString(s) {
				t.Errorf("diagnostic %s is not UTF-8: %q", what, s)
			}
			for _, r := range s {
				if r != ' ' && !strconv.IsPrint(r) {
					t.Errorf("diagnostic %s holds the unprintable rune %U (document text not quoted): %q", what, r, s)
					break
				}
			}
		}
	}
}

// recorder is a testing.TB that records failures instead of reporting
// them, so a test can check that the checks above fail when they must.
type recorder struct {
	testing.TB
	failures []string
}

// fatal stops a check run by Fatal or Fatalf; runChecks recovers it.
type fatal struct{}

func (r *recorder) Helper()                           {}
func (r *recorder) Error(args ...any)                 { r.failures = append(r.failures, fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) { r.Error(fmt.Sprintf(format, args...)) }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); panic(fatal{}) }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); panic(fatal{}) }

// runChecks runs checkGenerated on files with a recorder and returns what
// failed.
func runChecks(t *testing.T, g *spec.Graph, opts Options, files []File) []string {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(fatal); !ok {
					panic(v)
				}
			}
		}()
		checkGenerated(r, g, opts, files, checkOptions{})
	}()
	return r.failures
}

// TestChecksCatchInjection tampers with a generated package the way a
// generator bug would let a document do, and expects checkGenerated to
// fail for each, naming the problem; the untouched package passes.
func TestChecksCatchInjection(t *testing.T) {
	doc := `{"name": "g", "channels": {"v": {}}, "nodes": [{"id": "abc", "type": "t", "config": {"k": "x"}}],
	"edges": [{"from": "__start__", "to": "abc", "when": {"channel": "v", "eq": "abc"}}]}`
	g, ds := spec.Decode("inject.json", []byte(doc))
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	opts := Options{Package: "injected", PkgPath: "example.com/injected", Source: "inject.json"}
	files, ds := Generate(g, opts)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if got := runChecks(t, g, opts, files); len(got) > 0 {
		t.Fatalf("the untouched package fails the checks:\n%s", strings.Join(got, "\n"))
	}
	for _, tc := range []struct {
		name      string
		file      string
		old, new  string
		wantCheck string // part of the expected failure
	}{
		{"literal split into an expression", "graph.gen.go", `ChannelV = "v"`, `ChannelV = "v" + ""`, "document text shaped the code"},
		{"raw text in a comment", "graph.gen.go", "// NodeAbc is", "// NodeAbc\u202e is", "unprintable rune U+202E"},
		{"comment broken into a block", "graph.gen.go", "// NodeAbc is", "/* NodeAbc */ // is", "block comment"},
		{"declaration added", "graph.gen.go", "\ntype NodeID int\n", "\ntype NodeID int\n\nfunc init() {}\n", `"func init"`},
		{"embedded spec changed", "spec.gen.go", `"name": "g"`, `"name": "h"`, "embedded document differs"},
		{"import added", "program.gen.go", "import (\n", "import (\n\t_ \"os\"\n", `imports "os"`},
		{"unformatted", "program.gen.go", "\nfunc (p *program) Reduce(", "\nfunc (p *program)   Reduce(", "not gofmt-stable"},
		{"local outside localNames", "graph.gen.go", "func To(node NodeID) Target {", "func To(hook NodeID) Target {\n\tnode := hook", "declares the local \"hook\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tampered := slices.Clone(files)
			found := false
			for i, f := range tampered {
				if f.Name == tc.file && bytes.Contains(f.Data, []byte(tc.old)) {
					tampered[i].Data = bytes.Replace(f.Data, []byte(tc.old), []byte(tc.new), 1)
					found = true
				}
			}
			if !found {
				t.Fatalf("%s has no %q to tamper with; update this test", tc.file, tc.old)
			}
			got := runChecks(t, g, opts, tampered)
			for _, f := range got {
				if strings.Contains(f, tc.wantCheck) {
					return
				}
			}
			t.Errorf("the checks did not report %q; they reported:\n%s", tc.wantCheck, strings.Join(got, "\n"))
		})
	}
}
