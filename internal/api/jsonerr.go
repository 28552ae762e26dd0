package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/routerhq/router/internal/jsontext"
	rfcproblem "github.com/routerhq/router/internal/problem"
)

// maxJSONDepth is how deep encoding/json lets arrays and objects nest (its
// scanner's maxNestingDepth): deeper, it refuses the body.
const maxJSONDepth = 10000

// describeJSONError says, in the request's terms, why a body did not decode
// into the endpoint's request, and how to fix it (docs/api.md: a problem's
// detail says what was wrong and how to fix it): the field and the type it
// takes, never the router's Go types. fields lists the members the endpoint
// takes, for an unknown one. param is the field at fault ("" for none).
func describeJSONError(err error, fields string) (detail, param string) {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return "the body is empty: send one JSON object", ""
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends before its JSON value does: it was cut short, or a bracket, brace or quote is not closed; send one whole JSON object", ""
	case errors.As(err, &syn) && strings.HasSuffix(syn.Error(), "exceeded max depth"):
		// encoding/json's own words ("invalid character '[' exceeded max
		// depth") do not say what the limit is.
		return fmt.Sprintf("the body is nested deeper than %d levels of arrays and objects (at byte %d): send JSON nested less deeply", maxJSONDepth, syn.Offset), ""
	case errors.As(err, &syn):
		return fmt.Sprintf("the body is not valid JSON: %s at byte %d; send one JSON object", syn.Error(), syn.Offset), ""
	case errors.As(err, &typ):
		got := jsonValueKind(typ.Value)
		if typ.Field == "" {
			return "the body must be a JSON object, not " + got, ""
		}
		return fmt.Sprintf("field %q must be %s, not %s", typ.Field, goTypeInJSON(typ.Type), got), typ.Field
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if quoted, ok := strings.CutPrefix(msg, "unknown field "); ok {
		// The name is the caller's, as long as they made it: quoted
		// clipped, as checkMembers quotes one (quoteName).
		name, err := strconv.Unquote(quoted)
		if err != nil {
			name = strings.Trim(quoted, `"`)
		}
		return fmt.Sprintf("unknown field %s: this endpoint takes %s; correct the field's name or leave it out", quoteName(name), fields), cutName(name, 100)
	}
	return msg, ""
}

// jsonValueKind is an UnmarshalTypeError's Value ("number", "array",
// "number 1e999", ...) with its article. The literal is the caller's, as
// long as the body: quoted clipped.
func jsonValueKind(v string) string {
	kind, literal, _ := strings.Cut(v, " ")
	if literal != "" {
		return "the " + kind + " " + rfcproblem.Clip(literal)
	}
	switch kind {
	case "array", "object":
		return "an " + kind
	case "bool":
		return "true or false"
	case "":
		return "this value"
	}
	return "a " + kind
}

// locateTypeError is err, body's decoding error, with the indexes of the
// arrays on the way to a member of the wrong type written into its Field
// ("messages[1].name" where encoding/json says "messages.name"), so that its
// param names the element, as every other error inside an array does. They
// are found from the error's offset, on the error path only; err is returned
// as it is when its path and body's do not match (a map, an embedded struct).
func locateTypeError(body []byte, err error) error {
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &typ) || typ.Field == "" || typ.Offset < 1 || typ.Offset > int64(len(body)) {
		return err
	}
	// The offset is just past the wrong value's last byte (a scalar) or its
	// opening bracket: the byte before it is inside the value.
	steps := jsonStepsTo(body, int(typ.Offset)-1)
	names := strings.Split(typ.Field, ".")
	var path strings.Builder
	for _, s := range steps {
		if !s.member {
			fmt.Fprintf(&path, "[%d]", s.index)
			continue
		}
		if len(names) == 0 {
			return err
		}
		if path.Len() > 0 {
			path.WriteByte('.')
		}
		path.WriteString(names[0]) // as the router names it, whatever the body's case
		names = names[1:]
	}
	if len(names) > 0 {
		return err
	}
	located := *typ
	located.Field = path.String()
	return &located
}

// jsonStep is one step into a JSON value: a member of an object, or the
// element of an array at index.
type jsonStep struct {
	index  int
	member bool
}

// jsonStepsTo lists the steps from the top of body's first value (valid
// JSON) to the innermost value that holds the byte at pos.
func jsonStepsTo(body []byte, pos int) []jsonStep {
	var steps []jsonStep
	for i := jsontext.SkipSpace(body, 0); i < len(body) && (body[i] == '{' || body[i] == '['); {
		object, found := body[i] == '{', false
		for n, j := 0, jsontext.SkipSpace(body, i+1); j < len(body) && body[j] != '}' && body[j] != ']'; n++ {
			if object {
				end, _ := jsontext.StringEnd(body, j)
				j = jsontext.SkipSpace(body, jsontext.SkipSpace(body, end)+1) // past ':'
			}
			end := jsontext.SkipValue(body, j)
			if end <= j {
				return steps // not valid JSON
			}
			if pos >= j && pos < end {
				steps = append(steps, jsonStep{index: n, member: object})
				i, found = j, true
				break
			}
			if j = jsontext.SkipSpace(body, end); j < len(body) && body[j] == ',' {
				j = jsontext.SkipSpace(body, j+1)
			}
		}
		if !found {
			break
		}
	}
	return steps
}

// goTypeInJSON names the JSON a Go type decodes from.
func goTypeInJSON(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another type"
}

// jsonFields lists the JSON members of the struct v points to, for a detail:
// "prompt, prompt_version, input, route".
func jsonFields(v any) string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return "the members its documentation lists"
	}
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}
