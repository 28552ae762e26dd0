package prompt

// builtinEq and builtinLt are text/template's eq and lt for one pair of
// values, as the Go standard library writes them (text/template/funcs.go,
// Copyright 2011 The Go Authors, BSD-style license): the comparison functions
// of numbers.go, which replace the built-ins, fall back to them for every
// value that is not an input number, so templates keep the built-ins' rules
// there (and their error messages).

import (
	"errors"
	"fmt"
	"reflect"
)

var (
	errBadComparisonType = errors.New("invalid type for comparison")
	errNoComparison      = errors.New("missing argument for comparison")
)

type kind int

const (
	invalidKind kind = iota
	boolKind
	complexKind
	intKind
	floatKind
	stringKind
	uintKind
)

func basicKind(v reflect.Value) (kind, error) {
	switch v.Kind() {
	case reflect.Bool:
		return boolKind, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intKind, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintKind, nil
	case reflect.Float32, reflect.Float64:
		return floatKind, nil
	case reflect.Complex64, reflect.Complex128:
		return complexKind, nil
	case reflect.String:
		return stringKind, nil
	}
	return invalidKind, errBadComparisonType
}

// indirectInterface returns the concrete value in an interface value, or else
// the zero reflect.Value.
func indirectInterface(v reflect.Value) reflect.Value {
	if v.Kind() != reflect.Interface {
		return v
	}
	if v.IsNil() {
		return reflect.Value{}
	}
	return v.Elem()
}

// isNil returns true if v is the zero reflect.Value, or nil of its type.
func isNil(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return v.IsNil()
	}
	return false
}

// canCompare reports whether v1 and v2 are both the same kind, or one is nil.
func canCompare(v1, v2 reflect.Value) bool {
	k1 := v1.Kind()
	k2 := v2.Kind()
	if k1 == k2 {
		return true
	}
	return k1 == reflect.Invalid || k2 == reflect.Invalid
}

// builtinEq is the built-in eq for one pair (arg1 == arg), both already
// passed through indirectInterface.
func builtinEq(arg1, arg reflect.Value) (bool, error) {
	k1, _ := basicKind(arg1)
	k2, _ := basicKind(arg)
	truth := false
	if k1 != k2 {
		// Special case: Can compare integer values regardless of type's sign.
		switch {
		case k1 == intKind && k2 == uintKind:
			truth = arg1.Int() >= 0 && uint64(arg1.Int()) == arg.Uint()
		case k1 == uintKind && k2 == intKind:
			truth = arg.Int() >= 0 && arg1.Uint() == uint64(arg.Int())
		default:
			if arg1.IsValid() && arg.IsValid() {
				return false, fmt.Errorf("incompatible types for comparison: %v and %v", arg1.Type(), arg.Type())
			}
		}
	} else {
		switch k1 {
		case boolKind:
			truth = arg1.Bool() == arg.Bool()
		case complexKind:
			truth = arg1.Complex() == arg.Complex()
		case floatKind:
			truth = arg1.Float() == arg.Float()
		case intKind:
			truth = arg1.Int() == arg.Int()
		case stringKind:
			truth = arg1.String() == arg.String()
		case uintKind:
			truth = arg1.Uint() == arg.Uint()
		default:
			if !canCompare(arg1, arg) {
				return false, fmt.Errorf("non-comparable types %s: %v, %s: %v", arg1, arg1.Type(), arg.Type(), arg)
			}
			if isNil(arg1) || isNil(arg) {
				truth = isNil(arg) == isNil(arg1)
			} else {
				if !arg.Type().Comparable() {
					return false, fmt.Errorf("non-comparable type %s: %v", arg, arg.Type())
				}
				truth = arg1.Interface() == arg.Interface()
			}
		}
	}
	return truth, nil
}

// builtinLt is the built-in lt (arg1 < arg2), both already passed through
// indirectInterface.
func builtinLt(arg1, arg2 reflect.Value) (bool, error) {
	k1, err := basicKind(arg1)
	if err != nil {
		return false, err
	}
	k2, err := basicKind(arg2)
	if err != nil {
		return false, err
	}
	truth := false
	if k1 != k2 {
		// Special case: Can compare integer values regardless of type's sign.
		switch {
		case k1 == intKind && k2 == uintKind:
			truth = arg1.Int() < 0 || uint64(arg1.Int()) < arg2.Uint()
		case k1 == uintKind && k2 == intKind:
			truth = arg2.Int() >= 0 && arg1.Uint() < uint64(arg2.Int())
		default:
			return false, fmt.Errorf("incompatible types for comparison: %v and %v", arg1.Type(), arg2.Type())
		}
	} else {
		switch k1 {
		case boolKind, complexKind:
			return false, errBadComparisonType
		case floatKind:
			truth = arg1.Float() < arg2.Float()
		case intKind:
			truth = arg1.Int() < arg2.Int()
		case stringKind:
			truth = arg1.String() < arg2.String()
		case uintKind:
			truth = arg1.Uint() < arg2.Uint()
		default:
			panic("invalid kind")
		}
	}
	return truth, nil
}
