package prompt

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"unicode/utf8"
)

// absent is the value of an optional key the input lacks (a property the
// input schema declares but does not require), so that {{ .tier }},
// {{ if .tier }} and {{ default "x" .tier }} see a key rather than fail with
// a missing one. It is a nil map: false for if, with, and, or and not; no
// iterations for range (its else branch runs); printed, "<no value>", which
// render refuses, as it did for the nil this value replaced; and null for
// default, json, str, join, printf, print, println, html, js, urlquery and
// the comparisons, as any null. Unlike a null the caller sent, it is left
// out of {{ json . }}: the caller never sent it. {{ range . }} and len .
// still count it.
type absent map[string]any

// String is what text/template prints for it: what it prints for a null.
func (absent) String() string { return "<no value>" }

// isNull reports whether v, a value of the rendered data, is a null the
// caller sent or an absent optional key.
func isNull(v any) bool {
	if v == nil {
		return true
	}
	_, ok := v.(absent)
	return ok
}

var absentType = reflect.TypeFor[absent]()

// presentValue returns v, or the zero reflect.Value (what text/template's
// comparisons see for a null) when v holds an absent key.
func presentValue(v reflect.Value) reflect.Value {
	if v.IsValid() && v.Type() == absentType {
		return reflect.Value{}
	}
	return v
}

// withoutAbsent returns m without its absent keys (m itself when it has
// none), for json.
func withoutAbsent(m map[string]any) map[string]any {
	for _, v := range m {
		if _, ok := v.(absent); ok {
			c := maps.Clone(m)
			maps.DeleteFunc(c, func(_ string, v any) bool {
				_, ok := v.(absent)
				return ok
			})
			return c
		}
	}
	return m
}

// length is text/template's len (Go standard library, text/template/funcs.go),
// with an absent key an error, as a null is (a nil map would have length 0),
// and a string's length counted in characters (runes), not bytes: as slice
// cuts it ({{ slice .q (len .p) }} is .q past as many characters as .p
// holds) and as the input schema's maxLength counts it. An array's length
// is its elements, an object's its keys.
func length(item reflect.Value) (int, error) {
	for item.Kind() == reflect.Pointer || item.Kind() == reflect.Interface {
		if item.IsNil() {
			break
		}
		item = item.Elem()
	}
	if !item.IsValid() || isNil(item) && item.Kind() != reflect.Map && item.Kind() != reflect.Slice || item.Type() == absentType {
		return 0, errors.New("len of nil pointer: the value is null or absent in the input")
	}
	switch item.Kind() {
	case reflect.String:
		return utf8.RuneCountInString(item.String()), nil
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice:
		return item.Len(), nil
	}
	return 0, fmt.Errorf("len of type %s", item.Type())
}
