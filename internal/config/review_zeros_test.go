package config

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// zeroBase reaches every number of the schema: one element of each list, a
// route with targets, a key with a webhook and limits, a scripted step.
func zeroBase() map[string]any {
	return map[string]any{
		"api_keys": []any{map[string]any{"owner": "o", "key_env": "K",
			"webhook": map[string]any{"url": "https://x.example/h", "secret_env": "S"}, "limits": map[string]any{}}},
		"providers": []any{map[string]any{"name": "p", "type": "scripted", "script": []any{map[string]any{"output": "x"}},
			"price": map[string]any{"input_per_mtok": 1, "output_per_mtok": 1}}},
		"routes": map[string]any{"r": map[string]any{"targets": []any{map[string]any{"provider": "p",
			"price": map[string]any{"input_per_mtok": 1, "output_per_mtok": 1}}}}},
	}
}

// Settings whose documented range admits 0 (0 is their default, or means
// none); every other number or duration written as 0 is out of range.
var zeroAllowed = map[string]bool{
	"http.default_wait":                true,
	"providers[].max_idle_conns":       true, // "0 (the default, 256)"
	"providers[].max_tokens":           true, // "0 (the default) or more"
	"providers[].script[].latency":     true,
	"providers[].script[].status":      true,
	"providers[].price.input_per_mtok": true, "providers[].price.output_per_mtok": true,
	"routes.<name>.targets[].price.input_per_mtok": true, "routes.<name>.targets[].price.output_per_mtok": true,
}

// A number or a duration written as 0 was taken for a setting left out and
// given its default (`http.max_wait: 0s` became 60s, `shutdown.drain: 0s` the
// longest provider timeout), though the documented ranges refuse it. Every
// such setting of the schema is now refused, naming itself, in the same one
// message as the file's other problems; those whose range admits 0 keep
// their default.
func TestEverySettingWrittenAsZeroIsJudgedAsWritten(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	if _, err := Parse(marshal(t, zeroBase())); err != nil {
		t.Fatalf("the base file: %v", err)
	}
	var paths [][]string
	numberPaths(reflect.TypeOf(Config{}), nil, &paths)
	refused := 0
	for _, path := range paths {
		name := strings.Join(path, ".")
		name = strings.ReplaceAll(name, ".[]", "[]")
		m := zeroBase()
		zero := any(0)
		if leafIsDuration(path) {
			zero = "0s"
		}
		set(m, path, zero)
		m["listne"] = 1 // an unknown field in the same file
		_, err := Parse(marshal(t, m))
		if err == nil || !strings.Contains(err.Error(), "listne is not a known setting") {
			t.Fatalf("%s: %v", name, err)
		}
		others := strings.Count(err.Error(), "\n  ") - 1 // lines besides listne's
		switch {
		case zeroAllowed[name] && others != 0:
			t.Errorf("%s: 0 is in its range, yet:\n%v", name, err)
		case !zeroAllowed[name] && (others != 1 || !strings.Contains(err.Error(), path[len(path)-1])):
			t.Errorf("%s written as 0 is not refused, naming it, beside the unknown field:\n%v", name, err)
		case !zeroAllowed[name]:
			refused++
		}
	}
	if refused < 30 {
		t.Fatalf("only %d settings refused a written 0: has the walk lost its way?", refused)
	}
	// Messages name the setting and its range.
	mustRefuse(t, "http: {max_wait: 0s}\nshutdown: {drain: 0s}\nwebhooks: {workers: 0}\n",
		"http.max_wait (0s) must be a positive duration", "shutdown.drain (0s) must be a positive duration",
		"webhooks.workers (0) must be between 1 and 10000")
	// A zero in range keeps the default; one brought in by a merge key is
	// still judged.
	c, err := Parse([]byte("providers:\n  - {name: p, type: scripted, max_idle_conns: 0}\n"))
	if err != nil || c.Providers[0].MaxIdleConns != 256 {
		t.Fatalf("max_idle_conns: 0 is the default, 256: %v", err)
	}
	mustRefuse(t, "providers:\n  - &a {name: p, type: scripted, timeout: 10s, breaker: {open_for: 0s}}\n  - {<<: *a, name: q}\n",
		"providers[0] (p).breaker.open_for (0s)", "providers[1] (q).breaker.open_for (0s)")
	if _, err := Parse([]byte("providers:\n  - &a {name: p, type: scripted, timeout: 0s}\n  - {<<: *a, name: q, timeout: 5s}\n")); err == nil ||
		strings.Contains(err.Error(), "(q).timeout") || !strings.Contains(err.Error(), "(p).timeout (0s)") {
		t.Fatalf("an explicit key wins over the merged zero: %v", err)
	}
}

func marshal(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// numberPaths lists the YAML paths of every number held by value, a list
// element written "[]" and a route's name "<name>".
func numberPaths(t reflect.Type, path []string, out *[][]string) {
	switch t.Kind() {
	case reflect.Pointer:
		numberPaths(t.Elem(), path, out)
	case reflect.Slice:
		numberPaths(t.Elem(), append(path, "[]"), out)
	case reflect.Map:
		numberPaths(t.Elem(), append(path, "<name>"), out)
	case reflect.Struct:
		for _, i := range yamlFields(t) {
			f := t.Field(i)
			p := append(append([]string(nil), path...), strings.Split(f.Tag.Get("yaml"), ",")[0])
			if isNumber(f.Type) {
				*out = append(*out, p)
				continue
			}
			numberPaths(f.Type, p, out)
		}
	}
}

func leafIsDuration(path []string) bool {
	var t reflect.Type = reflect.TypeOf(Config{})
	for _, part := range path {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if part == "[]" || part == "<name>" {
			continue
		}
		for _, i := range yamlFields(t) {
			if strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0] == part {
				t = t.Field(i).Type
				break
			}
		}
	}
	return t == reflect.TypeOf(Duration(0))
}

// set writes v at path in m, creating mappings; lists and the route exist.
func set(m map[string]any, path []string, v any) {
	var cur any = m
	for i, part := range path {
		last := i == len(path)-1
		switch part {
		case "[]":
			cur = cur.([]any)[0]
			continue
		case "<name>":
			cur = cur.(map[string]any)["r"]
			continue
		}
		mm := cur.(map[string]any)
		if last {
			mm[part] = v
			return
		}
		if _, ok := mm[part]; !ok {
			if path[i+1] == "[]" {
				mm[part] = []any{map[string]any{}}
			} else {
				mm[part] = map[string]any{}
			}
		}
		cur = mm[part]
	}
}
