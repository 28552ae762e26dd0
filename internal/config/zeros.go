package config

import (
	"reflect"
	"sync"

	"go.yaml.in/yaml/v3"
)

// A number or duration the file writes as 0 decodes to the same zero as one it
// leaves out, and WithDefaults fills both with the default: `http.max_wait: 0s`
// (meant as "never wait") silently became 60s, `shutdown.drain: 0s` the longest
// provider timeout. The documented ranges say such settings must be positive,
// so a written zero is checked as written: writtenZeros finds the settings the
// file sets to zero, and problems are computed with those put back to zero.
// A setting whose range admits 0 (max_idle_conns, max_tokens: "0 is the
// default") passes that check and keeps its default.

// writtenZeros returns, addressable inside *c, every number or duration that
// the YAML document n writes as zero. It decodes n a second time into a shadow
// of Config's type whose numbers are pointers, so yaml.v3 itself resolves
// aliases and merge keys (an explicit key wins over a merged one) and a
// non-nil pointer to zero is a zero the file wrote. Decoding errors are left
// to the real decode, which reports them.
func writtenZeros(n *yaml.Node, c *Config) []reflect.Value {
	rv := reflect.ValueOf(c).Elem()
	sv := reflect.New(shadowOf(rv.Type()))
	_ = n.Decode(sv.Interface())
	var out []reflect.Value
	collectZeros(sv.Elem(), rv, &out)
	return out
}

// collectZeros walks the shadow s and the decoded value v side by side.
func collectZeros(s, v reflect.Value, out *[]reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if s.IsNil() || v.IsNil() {
			return
		}
		collectZeros(s.Elem(), v.Elem(), out)
	case reflect.Struct:
		for i, f := range yamlFields(v.Type()) {
			sf, vf := s.Field(i), v.Field(f)
			if isNumber(vf.Type()) {
				if !sf.IsNil() && sf.Elem().IsZero() && vf.IsZero() {
					*out = append(*out, vf)
				}
				continue
			}
			collectZeros(sf, vf, out)
		}
	case reflect.Slice:
		for i := range min(s.Len(), v.Len()) {
			collectZeros(s.Index(i), v.Index(i), out)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			// Map values are not addressable; Config's maps hold pointers
			// (routes), whose targets are.
			if sv := s.MapIndex(k); sv.IsValid() && v.MapIndex(k).Kind() == reflect.Pointer {
				collectZeros(sv, v.MapIndex(k), out)
			}
		}
	}
}

// withZeros runs f with every value of zeros set back to zero, then restores
// what WithDefaults put there.
func withZeros(zeros []reflect.Value, f func()) {
	saved := make([]reflect.Value, len(zeros))
	for i, z := range zeros {
		saved[i] = reflect.ValueOf(z.Interface())
		z.SetZero()
	}
	defer func() {
		for i, z := range zeros {
			z.Set(saved[i])
		}
	}()
	f()
}

var shadows sync.Map // reflect.Type -> reflect.Type

// shadowOf is t with every number (Duration included) a pointer, keeping the
// YAML tags; fields YAML does not see are left out.
func shadowOf(t reflect.Type) reflect.Type {
	if s, ok := shadows.Load(t); ok {
		return s.(reflect.Type)
	}
	var s reflect.Type
	switch t.Kind() {
	case reflect.Pointer:
		s = reflect.PointerTo(shadowOf(t.Elem()))
	case reflect.Slice:
		s = reflect.SliceOf(shadowOf(t.Elem()))
	case reflect.Map:
		s = reflect.MapOf(t.Key(), shadowOf(t.Elem()))
	case reflect.Struct:
		var fields []reflect.StructField
		for _, i := range yamlFields(t) {
			f := t.Field(i)
			ft := shadowOf(f.Type)
			if isNumber(f.Type) {
				ft = reflect.PointerTo(f.Type)
			}
			fields = append(fields, reflect.StructField{Name: f.Name, Type: ft, Tag: f.Tag})
		}
		s = reflect.StructOf(fields)
	default:
		s = t
	}
	shadows.Store(t, s)
	return s
}

// yamlFields are the indexes of t's fields that YAML decodes, in order.
func yamlFields(t reflect.Type) []int {
	var out []int
	for i := range t.NumField() {
		f := t.Field(i)
		if f.IsExported() && f.Tag.Get("yaml") != "-" {
			out = append(out, i)
		}
	}
	return out
}

// isNumber: an integer, float or Duration held by value (a pointer already
// tells a written zero from a missing setting).
func isNumber(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
