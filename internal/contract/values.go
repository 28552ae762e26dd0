package contract

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
)

// toFloat converts a JSON number (json.Number from the output, or a Go number from
// a decoded rule) to float64.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint:
		return float64(x), true
	}
	return 0, false
}

// normalize turns every number in v into a float64 so that values decoded from
// YAML (int), JSON rules (float64) and outputs (json.Number) compare by value.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = normalize(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = normalize(e)
		}
		return s
	}
	if f, ok := toFloat(v); ok {
		return f
	}
	return v
}

func equalValues(a, b any) bool {
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// display renders a value as JSON for a message.
func display(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

// fmtNum prints a computed number without float noise (0.1+0.2 prints 0.3).
func fmtNum(f float64) string {
	if math.Abs(f) < 1e15 {
		f = math.Round(f*1e9) / 1e9
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	if _, ok := toFloat(v); ok {
		return "number"
	}
	return reflect.TypeOf(v).String()
}
