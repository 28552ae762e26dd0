package config

import (
	"bufio"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// defaultsBase is the smallest file that reaches every documented default: a
// route of two targets (hedging on by default), an anthropic provider
// (streaming, max_tokens) and an api_keys entry.
const defaultsBase = `
api_keys:
  - {owner: o, key_env: K}
providers:
  - {name: p, type: anthropic, model: claude-x, api_key_env: ANTHROPIC_API_KEY}
  - {name: q, type: scripted}
routes:
  r: {targets: [{provider: p}, {provider: q}]}
`

// The defaults the reference table of docs/configuration.md promises are the
// ones Parse gives: every row is read from the document, its default cell
// decoded as YAML into the field's type and compared with the parsed value.
// A row whose default is not a literal must be listed in prose below, so a
// new row cannot go unchecked.
func TestDocumentedDefaultsAreTheParsedOnes(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(defaultsBase))
	if err != nil {
		t.Fatal(err)
	}
	prose := map[string]func(v reflect.Value) bool{
		"longest provider `timeout`": func(v reflect.Value) bool { return v.Interface() == c.Providers[0].Timeout },
		"0 (unlimited)":              func(v reflect.Value) bool { return v.IsNil() },
		"*(empty)*":                  func(v reflect.Value) bool { return v.IsZero() },
		"*(none)*":                   func(v reflect.Value) bool { return v.IsZero() },
		"—":                          func(v reflect.Value) bool { return v.IsZero() },
		"from the model name":        func(v reflect.Value) bool { return v.IsZero() },
	}
	f, err := os.Open("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ticked := regexp.MustCompile("`([^`]*)`")
	rows := 0
	sc := bufio.NewScanner(f)
	inTable := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "| Field | Default | Meaning |":
			inTable = true // the reference table; the deadlines table has other columns
		case line == "":
			inTable = false
		}
		if !inTable || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.ReplaceAll(line, `\|`, "/"), "|"), "|")
		fieldCell, def := strings.TrimSpace(cells[0]), strings.TrimSpace(cells[1])
		if def == "" || strings.HasPrefix(def, "required") {
			continue // no default
		}
		var fields []string
		for _, m := range ticked.FindAllStringSubmatch(fieldCell, -1) {
			name := m[1]
			if len(fields) > 0 && !strings.ContainsAny(name, ".[") { // `routes.<name>.hedge_min`, `hedge_max`
				prev := fields[len(fields)-1]
				name = prev[:strings.LastIndexByte(prev, '.')+1] + name
			}
			fields = append(fields, name)
		}
		values := ticked.FindAllStringSubmatch(def, -1)
		for i, field := range fields {
			rows++
			v, ok := fieldAt(reflect.ValueOf(c).Elem(), field)
			if !ok {
				t.Errorf("%s: no such setting in Config", field)
				continue
			}
			if check, ok := prose[def]; ok {
				if !check(v) {
					t.Errorf("%s: documented default %q, parsed %v", field, def, v)
				}
				continue
			}
			if !strings.HasPrefix(def, "`") || i >= len(values) {
				t.Errorf("%s: default %q is neither a literal nor known prose: teach this test", field, def)
				continue
			}
			lit := values[i][1]
			want := reflect.New(v.Type())
			if err := yaml.Unmarshal([]byte("v: "+lit), wrap(want)); err != nil {
				t.Errorf("%s: documented default %q does not decode: %v", field, lit, err)
				continue
			}
			if !reflect.DeepEqual(want.Elem().Interface(), v.Interface()) {
				t.Errorf("%s: documented default %s, parsed %v", field, lit, show(v))
			}
		}
	}
	t.Logf("%d documented settings checked", rows)
	if rows < 60 {
		t.Fatalf("only %d documented settings checked: has the table's layout changed?", rows)
	}
	// Defaults documented in prose under the table.
	for field, want := range map[string]time.Duration{
		"execution.retry.base": 200 * time.Millisecond, "execution.retry.cap": 5 * time.Second,
		"execution.retry.max_retry_after": 30 * time.Second,
	} {
		if v, _ := fieldAt(reflect.ValueOf(c).Elem(), field); v.Interface() != Duration(want) {
			t.Errorf("%s: documented default %s, parsed %v", field, want, show(v))
		}
	}
}

// wrap makes {v: *T} for yaml.Unmarshal into the pointer p.
func wrap(p reflect.Value) any {
	st := reflect.StructOf([]reflect.StructField{{Name: "V", Type: p.Type(), Tag: `yaml:"v"`}})
	w := reflect.New(st)
	w.Elem().Field(0).Set(p)
	return w.Interface()
}

func show(v reflect.Value) any {
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if d, ok := v.Interface().(Duration); ok {
		return d.D()
	}
	return v.Interface()
}

// fieldAt finds a documented setting ("providers[].timeout",
// "routes.<name>.deadline") in c: the first element of a list, the only route.
func fieldAt(v reflect.Value, path string) (reflect.Value, bool) {
	for part := range strings.SplitSeq(path, ".") {
		if strings.HasPrefix(part, "<") { // a route's name
			if v.Kind() != reflect.Map || v.Len() == 0 {
				return v, false
			}
			v = v.MapIndex(v.MapKeys()[0]).Elem()
			continue
		}
		name, list := strings.CutSuffix(part, "[]")
		if v.Kind() == reflect.Pointer { // an optional block (api_keys[].webhook): unset, its fields are their zero values
			if v.IsNil() {
				v = reflect.New(v.Type().Elem())
			}
			v = v.Elem()
		}
		found := false
		for _, i := range yamlFields(v.Type()) {
			if tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ","); tag == name {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return v, false
		}
		if list {
			if v.Len() == 0 {
				return v, false
			}
			v = v.Index(0)
		}
	}
	return v, true
}
