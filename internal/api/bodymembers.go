package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/routerhq/router/internal/jsontext"
)

// A body that encoding/json decodes may still not say one thing: it matches
// member names without regard to case ("Prompt" is "prompt", and of "input"
// and "Input" the last counts), and it keeps the last of two members with one
// name, as PostgreSQL's jsonb does, where other JSON readers keep the first or
// refuse the text. So a request could be answered for one input and stored,
// replayed and sent on webhooks with another. checkMembers refuses both, after
// the body has decoded (it is valid JSON then), with two scans of the text
// that allocate nothing in the usual case: neither decodes it again.

// checkMembers is the problem of a decoded body (valid JSON) whose top-level
// member names are not exactly those of the struct v points to (a name that
// differs from one only in case: unknown names encoding/json has refused
// already), or that holds an object with two members of the same name,
// anywhere; nil when there is none.
func checkMembers(body []byte, v any) *problem {
	if name, want, ok := inexactMember(body, v); !ok {
		hint := ""
		if want != "" {
			hint = fmt.Sprintf(" (member names are case-sensitive: did you mean %q?)", want)
		}
		return &problem{Status: http.StatusBadRequest, Type: "invalid-json", Title: "Malformed JSON body",
			Detail: fmt.Sprintf("unknown field %s%s: this endpoint takes %s; correct the field's name or leave it out",
				quoteName(name), hint, jsonFields(v))}
	}
	e := jsontext.DuplicateKey(body)
	if e == nil {
		return nil
	}
	return &problem{Status: http.StatusBadRequest, Type: "invalid-json", Title: "Malformed JSON body", Detail: duplicateDetail(e)}
}

// duplicateDetail says what a duplicate key is, and what to do about it.
func duplicateDetail(e *jsontext.DuplicateKeyError) string {
	what := fmt.Sprintf("the member %s appears twice in the body", quoteName(e.Key))
	if e.Pointer != "" {
		what = fmt.Sprintf("the object at %s has the key %s twice", cutName(e.Pointer, 200), quoteName(e.Key))
	}
	return what + fmt.Sprintf(" (the second at byte %d): JSON readers differ on which of the two values counts, "+
		"so the router takes neither; send each key once. Nothing was stored", e.Offset)
}

// inexactMember finds the first top-level member of body (valid JSON) whose
// name is not exactly one of the struct v's JSON names: ok is false, and
// want is the name it matched regardless of case ("" for none). A body that
// is not an object, or a v that is not a struct, has none.
func inexactMember(body []byte, v any) (name, want string, ok bool) {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return "", "", true
	}
	ok = true
	jsontext.TopMembers(body, func(raw []byte, escaped bool) bool {
		if escaped {
			var s string
			if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s) != nil {
				return false // not valid JSON: encoding/json refused it already
			}
			raw = []byte(s)
		}
		if w, exact := fieldNamed(t, raw); !exact {
			name, want, ok = string(raw), w, false
			return false
		}
		return true
	})
	return name, want, ok
}

// fieldNamed says whether struct t has a field whose JSON name is exactly
// name, and else the JSON name that matches it regardless of case.
func fieldNamed(t reflect.Type, name []byte) (foldsTo string, exact bool) {
	for i := range t.NumField() {
		if tag, ok := jsonName(t.Field(i)); ok && string(name) == tag {
			return "", true
		}
	}
	for i := range t.NumField() {
		if tag, ok := jsonName(t.Field(i)); ok && strings.EqualFold(string(name), tag) {
			return tag, false
		}
	}
	return "", false
}

// jsonName is the member name encoding/json gives field f (ok false: none).
func jsonName(f reflect.StructField) (name string, ok bool) {
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if tag == "-" || !f.IsExported() {
		return "", false
	}
	if tag == "" {
		return f.Name, true
	}
	return tag, true
}

// quoteName is s quoted, its first 100 bytes at most (whole characters),
// then "…".
func quoteName(s string) string {
	return strconv.Quote(cutName(s, 100))
}

// cutName is s, or its first n bytes at most (whole characters) and "…".
func cutName(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
