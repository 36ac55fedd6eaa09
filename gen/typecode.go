package gen

import (
	"fmt"
	"go/types"

	"github.com/dave/jennifer/jen"
)

// emittable reports why t cannot be written in generated code: it must be
// built from named types of importable packages (no generic instances),
// predeclared types, pointers, slices, arrays and maps.
func emittable(t types.Type) error {
	switch t := t.(type) {
	case *types.Basic:
		if t.Kind() == types.Invalid || t.Info()&types.IsUntyped != 0 || t.Kind() == types.UnsafePointer {
			return fmt.Errorf("type %s cannot be bound", t)
		}
		return nil
	case *types.Alias:
		if t.Obj().Pkg() == nil {
			return nil // any
		}
		if t.TypeArgs().Len() > 0 {
			return fmt.Errorf("generic alias %s cannot be bound", typeString(t))
		}
		if !t.Obj().Exported() {
			return fmt.Errorf("type %s is not exported", typeString(t))
		}
		return nil
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() == nil {
			return nil // error
		}
		if t.TypeArgs().Len() > 0 {
			return fmt.Errorf("generic type %s cannot be bound", typeString(t))
		}
		if !obj.Exported() {
			return fmt.Errorf("type %s is not exported", typeString(t))
		}
		if obj.Parent() != obj.Pkg().Scope() {
			return fmt.Errorf("type %s is local to a function", typeString(t))
		}
		return nil
	case *types.Pointer:
		return emittable(t.Elem())
	case *types.Slice:
		return emittable(t.Elem())
	case *types.Array:
		return emittable(t.Elem())
	case *types.Map:
		if err := emittable(t.Key()); err != nil {
			return err
		}
		return emittable(t.Elem())
	case *types.Interface:
		if t.Empty() {
			return nil
		}
	}
	return fmt.Errorf("type %s cannot be bound; bind a named type instead", typeString(t))
}

// typeCode writes t (which emittable accepted) with jennifer, qualifying
// every named type by its import path.
func typeCode(t types.Type) jen.Code {
	switch t := t.(type) {
	case *types.Basic:
		return jen.Id(t.Name())
	case *types.Alias:
		if t.Obj().Pkg() == nil {
			return jen.Id(t.Obj().Name())
		}
		return jen.Qual(t.Obj().Pkg().Path(), t.Obj().Name())
	case *types.Named:
		if t.Obj().Pkg() == nil {
			return jen.Id(t.Obj().Name())
		}
		return jen.Qual(t.Obj().Pkg().Path(), t.Obj().Name())
	case *types.Pointer:
		return jen.Op("*").Add(typeCode(t.Elem()))
	case *types.Slice:
		return jen.Index().Add(typeCode(t.Elem()))
	case *types.Array:
		return jen.Index(jen.Lit(int(t.Len()))).Add(typeCode(t.Elem()))
	case *types.Map:
		return jen.Map(typeCode(t.Key())).Add(typeCode(t.Elem()))
	case *types.Interface:
		return jen.Any()
	}
	panic(fmt.Sprintf("gen: typeCode of unsupported type %s", typeString(t)))
}

// importsOf adds the import path and package name of every named type in t.
func importsOf(t types.Type, add func(path, name string)) {
	switch t := t.(type) {
	case *types.Alias:
		if p := t.Obj().Pkg(); p != nil {
			add(p.Path(), p.Name())
		}
	case *types.Named:
		if p := t.Obj().Pkg(); p != nil {
			add(p.Path(), p.Name())
		}
	case *types.Pointer:
		importsOf(t.Elem(), add)
	case *types.Slice:
		importsOf(t.Elem(), add)
	case *types.Array:
		importsOf(t.Elem(), add)
	case *types.Map:
		importsOf(t.Key(), add)
		importsOf(t.Elem(), add)
	}
}

// isEmptyInterface reports whether t is any (or interface{}).
func isEmptyInterface(t types.Type) bool {
	i, ok := types.Unalias(t).(*types.Interface)
	return ok && i.Empty()
}

// isStringKind reports whether t's underlying type is string.
func isStringKind(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}
