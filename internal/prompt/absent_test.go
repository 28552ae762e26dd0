package prompt_test

import (
	"encoding/json"
	"strings"
	"testing"
)

const absentInput = `{"type":"object","properties":{"q":{"type":"string"},"tier":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"n":{"type":"number"}},"required":["q"]}`

func renderAbsent(t *testing.T, content, input string) (string, error) {
	t.Helper()
	set, _, err := loadOne(t, "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\ninput_schema: in.json\nmessages:\n  - role: user\n    content: 'Answer in JSON: "+content+"'\n",
		map[string]string{"out.json": outSchema, "in.json": absentInput})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	msgs, err := p.Render(json.RawMessage(input))
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(msgs[0].Content, "Answer in JSON: "), nil
}

// {{ json . }} showed the optional keys the caller never sent, as null:
// {"q":"x"} rendered {"n":null,"q":"x","tags":null,"tier":null}. They are
// left out; a null the caller sent stays. Found by review.
func TestJSONOfInputLeavesOutAbsentKeys(t *testing.T) {
	for _, c := range []struct{ content, input, want string }{
		{`{{ json . }}`, `{"q":"x"}`, `{"q":"x"}`},
		{`{{ json . }}`, `{"q":"x","tier":null}`, `{"q":"x","tier":null}`},
		{`{{ json . }}`, `{"q":"x","tags":["a"],"n":1.50}`, `{"n":1.50,"q":"x","tags":["a"]}`},
		{`{{ json $ }}`, `{"q":"x"}`, `{"q":"x"}`},
		{`{{ json .tier }}`, `{"q":"x"}`, `null`},
	} {
		got, err := renderAbsent(t, c.content, c.input)
		if err != nil || got != c.want {
			t.Errorf("%s over %s = %q, %v; want %q", c.content, c.input, got, err, c.want)
		}
	}
}

// Everything else sees an absent optional key as before, as a null: if, with,
// range's else, default, and, or, not, eq and ne; printed, it is refused.
func TestAbsentKeyActsAsNull(t *testing.T) {
	for _, c := range []struct{ content, want string }{
		{`{{ if .tier }}T{{ else }}none{{ end }}`, `none`},
		{`{{ with .tier }}T{{ else }}none{{ end }}`, `none`},
		{`{{ range .tags }}T{{ else }}none{{ end }}`, `none`},
		{`{{ default "std" .tier }} {{ .tier | default "std" }}`, `std std`},
		{`{{ or .tier "std" }} {{ not .tier }} {{ and .tier "x" | json }}`, `std true null`},
		{`{{ eq .tier "gold" }} {{ ne .tier "gold" }} {{ if eq .tier "gold" "std" }}y{{ end }}`, `false true`},
		{`{{ json (index . "tier") }}`, `null`},
	} {
		got, err := renderAbsent(t, c.content, `{"q":"x"}`)
		if err != nil || got != c.want {
			t.Errorf("%s = %q, %v; want %q", c.content, got, err, c.want)
		}
	}
	for _, c := range []struct{ content, want string }{
		{`{{ .tier }}`, `rendered "<no value>"`},
		{`{{ printf "%s" .tier }}`, `null or absent here: n, tags, tier`},
		{`{{ print .tier }}`, `null or absent here: n, tags, tier`},
		{`{{ html .tier }}`, `null or absent here: n, tags, tier`},
		{`{{ upper .tier }}`, `upper: value is null`},
		{`{{ join ", " .tags }}`, `join: value is null`},
		{`{{ lt .n 3 }}`, `lt`},
		{`{{ . }}`, `null or absent here: n, tags, tier`},
		{`{{ printf "%v" . }}`, `null or absent here: n, tags, tier`},
	} {
		got, err := renderAbsent(t, c.content, `{"q":"x"}`)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s = %q, %v; want an error with %q", c.content, got, err, c.want)
		}
	}
}

// len of an absent key is an error, as of a null (not the 0 of an empty
// array); len of a value counts as before.
func TestLenOfAbsentKey(t *testing.T) {
	for _, c := range []struct{ content, input string }{
		{`{{ len .tags }}`, `{"q":"x"}`},
		{`{{ .tags | len }}`, `{"q":"x"}`},
		{`{{ len .tags }}`, `{"q":"x","tags":null}`},
		{`{{ .tags | len }}`, `{"q":"x","tags":null}`},
	} {
		got, err := renderAbsent(t, c.content, c.input)
		if err == nil || !strings.Contains(err.Error(), "len of nil pointer") {
			t.Errorf("%s over %s = %q, %v; want len of nil pointer", c.content, c.input, got, err)
		}
	}
	got, err := renderAbsent(t, `{{ len .tags }} {{ .q | len }} {{ len . }} {{ len .n }}`, `{"q":"xy","tags":["a","b","c"],"n":1.5}`)
	if want := "3 2 4 3"; err != nil || got != want {
		t.Fatalf("= %q, %v; want %q", got, err, want)
	}
}

// {{ if .tier.name }} with the optional tier absent failed with `map has no
// entry for key "name"`, which reads as if the caller had sent tier without
// name. The error says .tier is absent (optional) and to guard it. Found by
// review.
func TestFieldOfAbsentKeySaysItIsAbsent(t *testing.T) {
	for _, c := range []struct{ content, want string }{
		{`{{ if .tier.name }}x{{ end }}`, `{{ .tier.name }} (content line 1, column 28) reads "name" of .tier, but .tier is absent in the input (optional: the input schema does not require it and the caller did not send it): the prompt is at fault; guard it with {{ with .tier }}...{{ .name }}...{{ end }}, or {{ if .tier }}`},
		{`{{ .q }} {{ .tier.name.first }}`, `reads "name" of .tier, but .tier is absent in the input`},
		{`{{ range .tags }}{{ $.tier.level }}{{ end }}{{ .q }}`, `{{ $.tier.level }} (content line 1, column 37) reads "level" of $.tier, but $.tier is absent in the input`},
		{`{{ printf "%s" .tier.name }}`, `guard it with {{ with .tier }}`},
	} {
		got, err := renderAbsent(t, c.content, `{"q":"x","tags":["a"]}`)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "map has no entry") {
			t.Errorf("%s = %q, %v; want an error with %q", c.content, got, err, c.want)
		}
	}
	// A key missing from a value the caller sent keeps text/template's error.
	for _, in := range []string{`{"q":"x","tier":{}}`, `{"q":"x","tier":{"level":1}}`} {
		_, err := renderAbsent(t, `{{ if .tier.name }}x{{ end }}`, in)
		if err == nil || !strings.Contains(err.Error(), `map has no entry for key "name"`) || strings.Contains(err.Error(), "absent") {
			t.Errorf("over %s: %v; want map has no entry", in, err)
		}
	}
	// A field of a key the caller sent as null says so (it said "nil
	// pointer evaluating interface {}.name"). Found by review.
	for _, c := range []struct{ content, input, want string }{
		{`{{ if .tier.name }}x{{ end }}`, `{"q":"x","tier":null}`, `{{ .tier.name }} (content line 1, column 28) reads "name" of .tier, but .tier is null in the input: send .tier as an object, or guard the read in the prompt with {{ with .tier }}...{{ .name }}...{{ end }}, or {{ if .tier }}`},
		{`{{ .q }} {{ $.tier.name.first }}`, `{"q":"x","tier":{"name":null}}`, `reads "first" of $.tier.name, but $.tier.name is null in the input`},
		{`{{ range .tags }}{{ $.tier.level }}{{ end }}{{ .q }}`, `{"q":"x","tier":null,"tags":["a"]}`, `{{ $.tier.level }} (content line 1, column 37) reads "level" of $.tier, but $.tier is null in the input`},
	} {
		got, err := renderAbsent(t, c.content, c.input)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "nil pointer") {
			t.Errorf("%s over %s = %q, %v; want an error with %q", c.content, c.input, got, err, c.want)
		}
	}
	got, err := renderAbsent(t, `{{ with .tier }}{{ .name }}{{ else }}none{{ end }}`, `{"q":"x"}`)
	if err != nil || got != "none" {
		t.Errorf("guarded = %q, %v", got, err)
	}
}
