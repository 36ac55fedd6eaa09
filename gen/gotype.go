package gen

import (
	"fmt"
	"go/token"
	"go/types"
	"strings"
)

// typeExpr is a parsed GOTYPE of a binding: a Go type expression whose named
// types carry their full import path, e.g. "[]example.com/chat.Message",
// "*example.com/shop.Cart", "map[string]example.com/x.Y", "float64".
type typeExpr struct {
	op   byte // '*' pointer, 's' slice, 'm' map, 'n' name
	elem *typeExpr
	key  *typeExpr // map key
	pkg  string    // import path of a name; "" for a predeclared type
	name string
}

// parseTypeExpr parses a GOTYPE. The grammar is
//
//	Type = "*" Type | "[]" Type | "map[" Type "]" Type | Name
//	Name = ident | importpath "." ident
//
// where importpath is everything before the last "." that follows the last
// "/" (so "example.com/chat.Message" is package "example.com/chat", type
// "Message", and "time.Duration" is package "time"). Arrays, channels,
// functions, generic instances and unnamed structs are not bindable.
func parseTypeExpr(s string) (*typeExpr, error) {
	e, rest, err := parseType(s)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, fmt.Errorf("unexpected %q after the type", rest)
	}
	return e, nil
}

func parseType(s string) (*typeExpr, string, error) {
	switch {
	case s == "":
		return nil, "", fmt.Errorf("missing type")
	case strings.HasPrefix(s, "*"):
		elem, rest, err := parseType(s[1:])
		return &typeExpr{op: '*', elem: elem}, rest, err
	case strings.HasPrefix(s, "[]"):
		elem, rest, err := parseType(s[2:])
		return &typeExpr{op: 's', elem: elem}, rest, err
	case strings.HasPrefix(s, "["):
		return nil, "", fmt.Errorf("array types are not bindable; use a slice []T")
	case strings.HasPrefix(s, "map["):
		key, rest, err := parseType(s[4:])
		if err != nil {
			return nil, "", err
		}
		if !strings.HasPrefix(rest, "]") {
			return nil, "", fmt.Errorf("map key type not closed by ]")
		}
		elem, rest, err := parseType(rest[1:])
		return &typeExpr{op: 'm', key: key, elem: elem}, rest, err
	}
	end := strings.IndexAny(s, "]")
	if end < 0 {
		end = len(s)
	}
	full, rest := s[:end], s[end:]
	if strings.ContainsAny(full, "[(){} \t,") {
		return nil, "", fmt.Errorf("%q is not a bindable type name (generic instances, functions and literal structs cannot be bound)", full)
	}
	dot := strings.LastIndex(full, ".")
	if dot < strings.LastIndex(full, "/") {
		dot = -1
	}
	if dot < 0 {
		if !token.IsIdentifier(full) {
			return nil, "", fmt.Errorf("%q is not a type name", full)
		}
		return &typeExpr{op: 'n', name: full}, rest, nil
	}
	pkg, name := full[:dot], full[dot+1:]
	if pkg == "" || !token.IsIdentifier(name) || !token.IsExported(name) {
		return nil, "", fmt.Errorf("%q is not an exported type of a package (write importpath.Type, e.g. example.com/chat.Message)", full)
	}
	return &typeExpr{op: 'n', pkg: pkg, name: name}, rest, nil
}

// packages calls add with the import path of every named type in e.
func (e *typeExpr) packages(add func(string)) {
	switch e.op {
	case '*', 's':
		e.elem.packages(add)
	case 'm':
		e.key.packages(add)
		e.elem.packages(add)
	default:
		if e.pkg != "" {
			add(e.pkg)
		}
	}
}

// resolve builds the types.Type of e, looking named types up with lookup.
func (e *typeExpr) resolve(lookup func(pkg, name string) (types.Type, error)) (types.Type, error) {
	switch e.op {
	case '*':
		elem, err := e.elem.resolve(lookup)
		if err != nil {
			return nil, err
		}
		return types.NewPointer(elem), nil
	case 's':
		elem, err := e.elem.resolve(lookup)
		if err != nil {
			return nil, err
		}
		return types.NewSlice(elem), nil
	case 'm':
		key, err := e.key.resolve(lookup)
		if err != nil {
			return nil, err
		}
		elem, err := e.elem.resolve(lookup)
		if err != nil {
			return nil, err
		}
		if !types.Comparable(key) {
			return nil, fmt.Errorf("map key type %s is not comparable", typeString(key))
		}
		return types.NewMap(key, elem), nil
	}
	if e.pkg == "" {
		obj, ok := types.Universe.Lookup(e.name).(*types.TypeName)
		if !ok || e.name == "comparable" {
			return nil, fmt.Errorf("%q is not a predeclared type; write a named type with its import path, e.g. example.com/chat.Message", e.name)
		}
		return obj.Type(), nil
	}
	return lookup(e.pkg, e.name)
}

// typeString writes t for messages with full import paths.
func typeString(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string { return p.Path() })
}
