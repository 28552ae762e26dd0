package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/routerhq/router/internal/contract"
)

// The input's numbers reach templates as json.Number, which keeps the caller's
// spelling when printed ({{ .price }} prints 12.50 as sent) but is a string to
// text/template's built-ins: printf "%.2f" printed "%!f(json.Number=12.5)",
// gt .qty 10 failed ("incompatible types for comparison") and eq .a .b
// compared spellings. The functions here replace those built-ins: they treat a
// json.Number as the number it holds and behave exactly like the built-ins for
// every other value.

// printf is fmt.Sprintf, with an input number formatted by the verb as a number:
// %d (and %b %o %O %x %X %c %U) as an integer, which it must be (12 and 12.0
// are; 12.5 is an error), %f (and %e %E %F %g %G) as a 64-bit float, %s %v %q
// as the caller wrote it; the numbers inside an array or object the same way
// (printfContainer). A null argument is an error (errNullPrinted), and so
// is an array or object with a null in it (errNestedNullPrinted), and so is a
// verb that does not fit its argument, or a missing or extra argument (fmt
// would write "%!d(string=12)" into the prompt; fmtError).
func printf(format string, args ...any) (string, error) {
	var err error
	wrapped, copied := args, false
	for i, a := range args {
		if isNull(a) {
			return "", fmt.Errorf("printf %q: argument %d: %w", format, i+1, errNullPrinted)
		}
		if holdsNull(a) {
			return "", fmt.Errorf("printf %q: argument %d: %w", format, i+1, errNestedNullPrinted)
		}
		var w any
		if n, ok := a.(json.Number); ok {
			w = printfNumber{n: n, err: &err}
		} else if c, ok := newPrintfContainer(a, i+1, &err); ok {
			w = c
		} else {
			continue
		}
		if !copied {
			wrapped, copied = append([]any(nil), args...), true // the caller's slice stays as it was
		}
		wrapped[i] = w
	}
	s := fmt.Sprintf(format, wrapped...)
	if err != nil {
		return "", fmt.Errorf("printf %q: %w", format, err)
	}
	if err := fmtError(format, wrapped, s); err != nil {
		return "", err
	}
	return s, nil
}

// printfNumber formats an input number for printf by its verb; a number the
// verb cannot take sets *err (the first such).
type printfNumber struct {
	n   json.Number
	err *error
}

// Format implements fmt.Formatter.
func (p printfNumber) Format(f fmt.State, verb rune) {
	spec := fmt.FormatString(f, verb)
	switch verb {
	case 'd', 'b', 'o', 'O', 'c', 'U', 'x', 'X':
		if i, ok := contract.NumberInt64(p.n); ok {
			fmt.Fprintf(f, spec, i)
			return
		}
		if verb != 'x' && verb != 'X' {
			p.fail(fmt.Errorf("%%%c needs a whole number within 64 bits, got %s; print it as written with %%v, or as a decimal with %%f", verb, p.n))
			fmt.Fprintf(f, "%%!%c(%s)", verb, p.n)
			return
		}
		fallthrough // %x of a fraction: hexadecimal floating point, like fmt
	case 'e', 'E', 'f', 'F', 'g', 'G':
		x, err := strconv.ParseFloat(string(p.n), 64)
		if err != nil && (!errors.Is(err, strconv.ErrRange) || math.IsInf(x, 0)) {
			p.fail(fmt.Errorf("%%%c needs a number within a 64-bit float, got %s", verb, p.n))
			fmt.Fprintf(f, "%%!%c(%s)", verb, p.n)
			return
		}
		fmt.Fprintf(f, spec, x) // a number too small for a float64 is 0
	case 's', 'v', 'q': // as written, like a json.Number
		fmt.Fprintf(f, spec, string(p.n))
	default: // a verb for no number (%t, %p, ...): fmt would say "%!t(string=1)"
		p.fail(fmt.Errorf("%%%c cannot format the number %s; use %%v to print it as written, or a verb for numbers (%%d, %%f)", verb, p.n))
		fmt.Fprintf(f, "%%!%c(%s)", verb, p.n)
	}
}

func (p printfNumber) fail(err error) {
	if *p.err == nil {
		*p.err = err
	}
}

// number returns v, an argument of a comparison, as a number when it is a
// json.Number or a Go integer or float (a template's literal: 10, 2.5).
func number(v reflect.Value) (any, bool) {
	if !v.IsValid() {
		return nil, false
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint(), true
	case reflect.Float32, reflect.Float64:
		return v.Float(), true
	}
	if isInputNumber(v) {
		return v.Interface().(json.Number), true
	}
	return nil, false
}

// isInputNumber reports whether v holds a json.Number.
func isInputNumber(v reflect.Value) bool {
	if !v.IsValid() || !v.CanInterface() {
		return false
	}
	_, ok := v.Interface().(json.Number)
	return ok
}

// compareNumbers compares a and b by value when one is an input number and the
// other a number too; handled is false when they are not both numbers (then
// the built-in rules apply).
func compareNumbers(name string, a, b reflect.Value) (c int, handled bool, err error) {
	if !isInputNumber(a) && !isInputNumber(b) {
		return 0, false, nil
	}
	x, okA := number(a)
	y, okB := number(b)
	if !okA || !okB {
		return 0, false, nil
	}
	c, ok := contract.CompareNumbers(x, y)
	if !ok {
		return 0, true, fmt.Errorf("%s: cannot compare %v with %v as numbers", name, x, y)
	}
	return c, true, nil
}

// orderNumberString refuses to order an input number against a string: the
// built-in compared their spellings ("9" > "10").
func orderNumberString(name string, a, b reflect.Value) error {
	n, str := a, b
	if !isInputNumber(n) {
		n, str = b, a
	}
	if !isInputNumber(n) || str.Kind() != reflect.String || isInputNumber(str) {
		return nil
	}
	return fmt.Errorf("%s: cannot order the number %s against the string %q; compare a number with a number written without quotes (%s .qty 10)", name, n.String(), str.String(), name)
}

// eq is text/template's eq (arg1 == arg2[0] || arg1 == arg2[1] ...), with an
// input number equal to a number of the same value (10 equals 10.0 and to the
// literal 10); compared with a string, its spelling is compared as before.
func eq(arg1 reflect.Value, arg2 ...reflect.Value) (bool, error) {
	arg1 = presentValue(indirectInterface(arg1))
	if len(arg2) == 0 {
		return false, errNoComparison
	}
	for _, arg := range arg2 {
		arg = presentValue(indirectInterface(arg))
		c, handled, err := compareNumbers("eq", arg1, arg)
		if err != nil {
			return false, err
		}
		if handled {
			if c == 0 {
				return true, nil
			}
			continue
		}
		truth, err := builtinEq(arg1, arg)
		if truth || err != nil {
			return truth, err
		}
	}
	return false, nil
}

// ne is text/template's ne, with numbers compared as eq does.
func ne(arg1, arg2 reflect.Value) (bool, error) {
	equal, err := eq(arg1, arg2)
	return !equal, err
}

// lt is text/template's lt, with an input number ordered by value against a
// number; against a string it is an error (the built-in compared spellings).
func lt(arg1, arg2 reflect.Value) (bool, error) {
	return order("lt", arg1, arg2, func(c int) bool { return c < 0 })
}

// le is text/template's le, with numbers ordered as lt does.
func le(arg1, arg2 reflect.Value) (bool, error) {
	return order("le", arg1, arg2, func(c int) bool { return c <= 0 })
}

// gt is text/template's gt, with numbers ordered as lt does.
func gt(arg1, arg2 reflect.Value) (bool, error) {
	return order("gt", arg1, arg2, func(c int) bool { return c > 0 })
}

// ge is text/template's ge, with numbers ordered as lt does.
func ge(arg1, arg2 reflect.Value) (bool, error) {
	return order("ge", arg1, arg2, func(c int) bool { return c >= 0 })
}

// order evaluates an ordering: by value when an input number meets a number,
// else as text/template's built-in, whose le is lt or eq.
func order(name string, arg1, arg2 reflect.Value, holds func(c int) bool) (bool, error) {
	arg1, arg2 = presentValue(indirectInterface(arg1)), presentValue(indirectInterface(arg2))
	// A null or absent key cannot be ordered (the built-in said only
	// "invalid type for comparison"): render names the key and the guard.
	if !arg1.IsValid() {
		return false, &nullOrderedError{fn: name, arg: 1}
	}
	if !arg2.IsValid() {
		return false, &nullOrderedError{fn: name, arg: 2}
	}
	c, handled, err := compareNumbers(name, arg1, arg2)
	if err != nil {
		return false, err
	}
	if handled {
		return holds(c), nil
	}
	if err := orderNumberString(name, arg1, arg2); err != nil {
		return false, err
	}
	less, err := builtinLt(arg1, arg2)
	if err != nil {
		return false, err
	}
	if less {
		return holds(-1), nil
	}
	equal, err := builtinEq(arg1, arg2)
	if err != nil {
		return false, err
	}
	if equal {
		return holds(0), nil
	}
	return holds(1), nil
}
