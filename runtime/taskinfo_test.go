package runtime

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestTaskInfoClean pins clean's invariant: every field of taskInfo is
// either one the executor writes for every task (its identity) or one that
// clean checks, so reusing a taskInfo never leaks a field of one task into
// the next. A field added to taskInfo fails this test until it is added to
// one of the two.
func TestTaskInfoClean(t *testing.T) {
	identity := map[string]bool{"node": true, "key": true, "planID": true, "runID": true, "step": true, "id": true, "state": true}
	typ := reflect.TypeFor[taskInfo]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if identity[f.Name] {
			continue
		}
		var ti taskInfo
		if !ti.clean() {
			t.Fatal("a zero taskInfo is not clean")
		}
		v := reflect.ValueOf(&ti).Elem().Field(i)
		v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
		v.Set(nonZero(t, f.Type))
		if ti.clean() {
			t.Errorf("taskInfo.%s set, yet clean reports true: check it in clean, or write it for every task and list it as identity here", f.Name)
		}
	}
}

// nonZero returns a value of type typ that is not its zero value.
func nonZero(t *testing.T, typ reflect.Type) reflect.Value {
	switch typ.Kind() {
	case reflect.Bool:
		return reflect.ValueOf(true)
	case reflect.Slice:
		return reflect.MakeSlice(typ, 1, 1)
	case reflect.Pointer:
		return reflect.New(typ.Elem())
	case reflect.Func:
		return reflect.MakeFunc(typ, func([]reflect.Value) []reflect.Value { return nil })
	case reflect.Interface:
		return reflect.ValueOf(1)
	case reflect.Map:
		return reflect.MakeMap(typ)
	case reflect.String:
		return reflect.ValueOf("x").Convert(typ)
	}
	t.Fatalf("no non-zero value for %s: extend nonZero", typ)
	return reflect.Value{}
}
