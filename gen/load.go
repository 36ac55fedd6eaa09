package gen

import (
	"fmt"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/ilmek-go/ilmek/spec"
)

// BindingSpec is what the user binds, as written: channel name → GOTYPE and
// node type → GOTYPE. It is the JSON shape of a --bindings file:
//
//	{"channels": {"messages": "[]example.com/chat.Message"},
//	 "configs": {"llm": "example.com/chat.LLMOptions"}}
type BindingSpec struct {
	Channels map[string]string `json:"channels,omitempty"`
	Configs  map[string]string `json:"configs,omitempty"`
}

// Empty reports whether b binds nothing.
func (b BindingSpec) Empty() bool { return len(b.Channels) == 0 && len(b.Configs) == 0 }

// Binding is one resolved binding: the expression and its Go type.
type Binding struct {
	Expr string
	Type types.Type
}

// Bindings are resolved bindings, the input Generate takes. Build them with
// LoadBindings, or directly from go/types values in tests.
type Bindings struct {
	Channels map[string]Binding
	Configs  map[string]Binding
}

// LoadConfig says where LoadBindings resolves packages.
type LoadConfig struct {
	// Dir is the directory packages.Load runs in; its module resolves the
	// import paths of the bindings. "" is the current directory.
	Dir string
	// OutPkgPath is the import path of the package being generated, when
	// known: a binding into it, or into a package that imports it, would
	// be an import cycle and is refused.
	OutPkgPath string
}

// LoadBindings parses every GOTYPE of b and resolves its named types with a
// single packages.Load of the packages they name (and no load at all when
// they name none). The config types of the built-in node types
// (BuiltinConfigs) are known without a load, so a document that binds
// nothing else is checked in any directory, inside a Go module or not. Errors in a loaded package are ignored unless a bound
// type cannot be found; then they are reported with it. Each diagnostic is
// placed at the document element the binding is for: channels.NAME for a
// channel, the first node of the type for a config.
func LoadBindings(g *spec.Graph, b BindingSpec, cfg LoadConfig) (*Bindings, spec.Diagnostics) {
	d := &diags{g: g}
	b = WithBuiltins(g, b)
	type pending struct {
		config bool
		name   string
		expr   string
		te     *typeExpr
		path   string
		// builtin is the type of a built-in config (BuiltinConfigs),
		// made without loading its package.
		builtin types.Type
	}
	var all []pending
	paths := map[string]bool{}
	builtinPkgs := map[string]*types.Package{}
	add := func(config bool, name, expr string) {
		p := pending{config: config, name: name, expr: expr}
		what := bindingWhat(config, name, expr)
		if config {
			i := firstNodeOfType(g, name)
			if i < 0 {
				d.errorf("nodes", "bind the config of a type the spec uses: "+nodeTypeList(g), "%s: the spec has no node of type %s", what, quote(name))
				return
			}
			p.path = spec.PathKey(spec.PathIndex("nodes", i), "type")
		} else {
			if _, ok := g.Channel(name); !ok {
				d.errorf("channels", "bind a declared channel: "+channelList(g), "%s: the spec declares no channel %s", what, quote(name))
				return
			}
			p.path = spec.PathKey("channels", name)
		}
		if config && expr == BuiltinConfigs[name] {
			p.builtin = builtinType(name, builtinPkgs)
			all = append(all, p)
			return
		}
		te, err := parseTypeExpr(expr)
		if err != nil {
			d.errorf(p.path, "", "%s: %v", what, err)
			return
		}
		p.te = te
		te.packages(func(path string) { paths[path] = true })
		all = append(all, p)
	}
	for _, name := range sortedKeys(b.Channels) {
		add(false, name, b.Channels[name])
	}
	for _, name := range sortedKeys(b.Configs) {
		add(true, name, b.Configs[name])
	}
	pkgs := map[string]*packages.Package{}
	if len(paths) > 0 {
		list := sortedKeys(paths)
		loaded, err := packages.Load(&packages.Config{
			Mode: packages.NeedName | packages.NeedTypes | packages.NeedImports,
			Dir:  cfg.Dir,
		}, list...)
		if err != nil {
			d.errorf("", "", "loading the binding packages %s: %v", strings.Join(list, ", "), err)
			return nil, d.list
		}
		for _, p := range loaded {
			pkgs[p.PkgPath] = p
		}
	}
	var cycles map[string][]string
	if cfg.OutPkgPath != "" && len(paths) > 0 {
		var err error
		if cycles, err = importChains(cfg.Dir, sortedKeys(paths), cfg.OutPkgPath); err != nil {
			d.errorf("", "", "listing the imports of the binding packages: %v", err)
			return nil, d.list
		}
	}
	lookup := func(path, name string) (types.Type, error) {
		if cfg.OutPkgPath != "" && path == cfg.OutPkgPath {
			return nil, fmt.Errorf("package %s is the package being generated; a binding into it would import itself", path)
		}
		p := pkgs[path]
		if p == nil || p.Types == nil || (p.Name == "" && len(p.Errors) > 0) {
			return nil, fmt.Errorf("package %s not found%s", path, pkgErrors(p))
		}
		if chain := cycles[path]; chain != nil {
			return nil, fmt.Errorf("package %s imports the package being generated %s (import cycle %s); move the type to a package that does not import it",
				path, cfg.OutPkgPath, strings.Join(chain, " -> "))
		}
		obj, ok := p.Types.Scope().Lookup(name).(*types.TypeName)
		if !ok {
			return nil, fmt.Errorf("package %s has no type %s%s", path, name, pkgErrors(p))
		}
		if obj.Type() == nil || types.Unalias(obj.Type()) == types.Typ[types.Invalid] {
			return nil, fmt.Errorf("type %s.%s is invalid%s", path, name, pkgErrors(p))
		}
		if n, ok := types.Unalias(obj.Type()).(*types.Named); ok && n.TypeParams().Len() > 0 && n.TypeArgs().Len() == 0 {
			return nil, fmt.Errorf("type %s.%s is generic; bind a non-generic type", path, name)
		}
		return obj.Type(), nil
	}
	out := &Bindings{Channels: map[string]Binding{}, Configs: map[string]Binding{}}
	for _, p := range all {
		t, err := p.builtin, error(nil)
		if t == nil {
			t, err = p.te.resolve(lookup)
		}
		if err != nil {
			d.errorf(p.path, "", "%s: %v", bindingWhat(p.config, p.name, p.expr), err)
			continue
		}
		if p.config {
			out.Configs[p.name] = Binding{Expr: p.expr, Type: t}
		} else {
			out.Channels[p.name] = Binding{Expr: p.expr, Type: t}
		}
	}
	return out, d.list
}

// bindingWhat names a binding the way the user wrote it, for messages.
func bindingWhat(config bool, name, expr string) string {
	if config {
		return "--config " + flagName(name) + "=" + flagName(expr)
	}
	return "--type " + flagName(name) + "=" + flagName(expr)
}

// pkgErrors formats the load errors of p for a message, or "".
func pkgErrors(p *packages.Package) string {
	if p == nil || len(p.Errors) == 0 {
		return ""
	}
	var b strings.Builder
	for i, e := range p.Errors {
		if i == 5 {
			fmt.Fprintf(&b, "\n\t... and %d more", len(p.Errors)-5)
			break
		}
		b.WriteString("\n\t")
		b.WriteString(e.Error())
	}
	return b.String()
}

func firstNodeOfType(g *spec.Graph, typ string) int {
	for i, n := range g.Nodes {
		if n.Type == typ {
			return i
		}
	}
	return -1
}

func nodeTypeList(g *spec.Graph) string {
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		seen[quote(n.Type)] = true
	}
	return strings.Join(sortedKeys(seen), ", ")
}

func channelList(g *spec.Graph) string {
	names := make([]string, len(g.Channels))
	for i, c := range g.Channels {
		names[i] = quote(c.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// importChains lists, for each of roots that imports out directly or
// through other packages, the import cycle binding it would close: for
// root a importing b importing out, [a b out a] (the generated package out
// would import a for the binding).
// It asks go list for import paths only (no type checking), so walking
// the whole dependency graph stays cheap.
func importChains(dir string, roots []string, out string) (map[string][]string, error) {
	all, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps, Dir: dir}, roots...)
	if err != nil {
		return nil, err
	}
	// via[p], present when out is reachable from p, is p's import on the
	// way to out ("" when p imports out itself); seen marks the packages
	// already decided.
	via := map[string]string{}
	seen := map[string]bool{}
	var visit func(p *packages.Package) bool
	visit = func(p *packages.Package) bool {
		if seen[p.PkgPath] {
			_, ok := via[p.PkgPath]
			return ok
		}
		seen[p.PkgPath] = true
		if _, ok := p.Imports[out]; ok {
			via[p.PkgPath] = ""
			return true
		}
		for _, path := range sortedKeys(p.Imports) {
			if visit(p.Imports[path]) {
				via[p.PkgPath] = path
				return true
			}
		}
		return false
	}
	chains := map[string][]string{}
	for _, p := range all {
		if !visit(p) {
			continue
		}
		chain := []string{p.PkgPath}
		for q := via[p.PkgPath]; q != ""; q = via[q] {
			chain = append(chain, q)
		}
		chains[p.PkgPath] = append(chain, out, p.PkgPath)
	}
	return chains, nil
}
