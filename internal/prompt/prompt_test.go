package prompt_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

func loadExamples(t *testing.T) *prompt.Set {
	t.Helper()
	set, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatalf("shipped examples must load:\n%v", err)
	}
	return set
}

func TestLoadDir_Examples(t *testing.T) {
	set := loadExamples(t)
	var names []string
	for _, p := range set.All() {
		names = append(names, p.ID())
		if p.Route != "default" || p.Format != prompt.FormatJSONSchema || p.MaxTokens <= 0 || p.Temperature == nil || *p.Temperature != 0 {
			t.Errorf("%s: unexpected settings %+v", p.ID(), p)
		}
		if p.Validator() == nil || p.InputSchema == nil || p.OutputSchema == nil || len(p.Messages) != 2 {
			t.Errorf("%s: incomplete prompt", p.ID())
		}
	}
	if strings.Join(names, ",") != "invoice@3,triage@3" {
		t.Fatalf("All() = %v, want invoice@3,triage@3 sorted by name", names)
	}
	inv, _ := set.Get("invoice", "3")
	if len(inv.Rules.Custom) != 1 || inv.Rules.Custom[0] != "invoice.dates_ordered" || len(inv.Rules.Sums) != 1 || inv.Rules.Sums[0].Total != "/total" {
		t.Fatalf("invoice rules not decoded: %+v", inv.Rules)
	}
	if r := inv.Rules.Ranges["/line_items/*/quantity"]; r.Min == nil || *r.Min != 0 {
		t.Fatalf("range not decoded: %+v", r)
	}
}

func TestGet(t *testing.T) {
	set := loadExamples(t)
	if p, err := set.Get("triage", ""); err != nil || p.Version != "3" {
		t.Fatalf("Get(triage, \"\") = %v, %v", p, err)
	}
	if _, err := set.Get("triage", "3"); err != nil {
		t.Fatal(err)
	}
	_, err := set.Get("triag", "")
	if !errors.Is(err, prompt.ErrUnknownPrompt) || !strings.Contains(err.Error(), "loaded: invoice@3, triage@3") {
		t.Fatalf("unknown name: %v", err)
	}
	_, err = set.Get("triage", "2")
	if !errors.Is(err, prompt.ErrUnknownVersion) || errors.Is(err, prompt.ErrUnknownPrompt) || !strings.Contains(err.Error(), `loaded at version "3", not "2"`) {
		t.Fatalf("unknown version: %v", err)
	}
}

func TestRender_Triage(t *testing.T) {
	p, _ := loadExamples(t).Get("triage", "")
	msgs, err := p.Render(json.RawMessage(`{"subject":"Charged twice","body":"My card was billed twice for March.\nPlease refund."}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Role != "user" {
		t.Fatalf("messages: %+v", msgs)
	}
	want := "Customer tier: standard\nSubject: Charged twice\nBody (one JSON string):\n\"My card was billed twice for March.\\nPlease refund.\""
	if msgs[1].Content != want {
		t.Fatalf("user message:\n%q\nwant\n%q", msgs[1].Content, want)
	}
	msgs, err = p.Render(json.RawMessage(`{"subject":"s","body":"b","customer_tier":"enterprise"}`))
	if err != nil || !strings.HasPrefix(msgs[1].Content, "Customer tier: enterprise\n") {
		t.Fatalf("tier not rendered: %v %q", err, msgs)
	}
}

// RenderParsed renders what Render renders, from the value ParseInput gave,
// and does not add the optional keys the input lacks to the caller's map.
func TestRenderParsedEqualsRender(t *testing.T) {
	p, _ := loadExamples(t).Get("triage", "")
	for _, in := range []string{
		`{"subject":"Charged twice","body":"My card was billed twice for March.\nPlease refund."}`,
		`{"subject":"s","body":"b","customer_tier":"enterprise"}`,
	} {
		want, err := p.Render(json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		m, err := p.ParseInput(json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		keys := len(m)
		got, err := p.RenderParsed(m, json.RawMessage(in))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("RenderParsed(%s) = %q, %v; Render gives %q", in, got, err, want)
		}
		if len(m) != keys {
			t.Fatalf("RenderParsed added keys to the caller's map: %v", m)
		}
	}
}

func TestRender_MissingValueIsAnError(t *testing.T) {
	p, _ := loadExamples(t).Get("triage", "")
	_, err := p.Render(json.RawMessage(`{"body":"b"}`))
	var re *prompt.RenderError
	if !errors.As(err, &re) || re.Field != "messages[1].content" || !strings.Contains(err.Error(), `map has no entry for key "subject"`) {
		t.Fatalf("want RenderError for missing subject, got %v", err)
	}
	if strings.Contains(err.Error(), "<no value>") {
		t.Fatalf("error mentions <no value>: %v", err)
	}
}

// writePrompt creates dir/name with a manifest and schema files.
func writePrompt(t *testing.T, dir, name, manifest string, files map[string]string) string {
	t.Helper()
	pd := filepath.Join(dir, name)
	if err := os.MkdirAll(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pd, "prompt.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(pd, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(pd, "prompt.yaml")
}

const outSchema = `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`

func manifestWith(extra string) string {
	return `name: p
version: "1"
max_tokens: 100
output_schema: out.json
messages:
  - role: user
    content: "Answer in JSON: {{ .q }}"
` + extra
}

func loadOne(t *testing.T, manifest string, files map[string]string) (*prompt.Set, string, error) {
	t.Helper()
	dir := t.TempDir()
	if files == nil {
		files = map[string]string{"out.json": outSchema}
	}
	file := writePrompt(t, dir, "p", manifest, files)
	set, err := prompt.LoadDir(dir)
	return set, file, err
}

func TestLoadDir_Malformed(t *testing.T) {
	tests := []struct {
		name, manifest string
		files          map[string]string
		field, msg     string
	}{
		{"missing version", strings.Replace(manifestWith(""), "version: \"1\"\n", "", 1), nil, "version", "required"},
		{"bad template", strings.Replace(manifestWith(""), "{{ .q }}", "{{ .q ", 1), nil, "messages[0].content", "template: p messages[0].content:1: unclosed action"},
		{"unknown template function", strings.Replace(manifestWith(""), "{{ .q }}", "{{ shout .q }}", 1), nil, "messages[0].content", `function "shout" not defined`},
		{"missing schema file", manifestWith(""), map[string]string{}, "output_schema", "no such file"},
		{"missing output_schema", strings.Replace(manifestWith(""), "output_schema: out.json\n", "", 1), nil, "output_schema", "required"},
		{"schema outside the prompt dir", strings.Replace(manifestWith(""), "out.json", "../out.json", 1), nil, "output_schema", "must be a relative path inside"},
		{"unknown field", manifestWith("temprature: 0.2\n"), nil, "temprature", "unknown field (line 8); known fields: description, input_schema"},
		{"unknown rules field", manifestWith("rules:\n  enum: {}\n"), nil, "rules.enum", "known fields: allow_fenced, custom, enums"},
		{"invalid schema", manifestWith(""), map[string]string{"out.json": `{"type":"objekt"}`}, "output_schema", "is not a valid JSON Schema"},
		{"schema not JSON", manifestWith(""), map[string]string{"out.json": `{"type":`}, "output_schema", "is not valid JSON"},
		{"invalid input schema", manifestWith("input_schema: in.json\n"), map[string]string{"out.json": outSchema, "in.json": `{"minLength":"x"}`}, "input_schema", "is not a valid JSON Schema"},
		{"rule on undeclared path", manifestWith("rules:\n  enums:\n    /anwser: [a]\n"), nil, "rules.enums[/anwser]", `property "anwser" is not declared`},
		{"unknown custom rule", manifestWith("rules:\n  custom: [no.such.rule]\n"), nil, "rules.custom[0]", `no Go rule named "no.such.rule"`},
		{"bad response_format", manifestWith("response_format: xml\n"), nil, "response_format", `"xml" is not one of`},
		{"json_object without JSON", strings.Replace(manifestWith("response_format: json_object\n"), "Answer in JSON", "Answer", 1), nil, "response_format", `needs the word "JSON"`},
		{"bad role", strings.Replace(manifestWith(""), "role: user", "role: human", 1), nil, "messages[0].role", `"human" is not one of`},
		{"no max_tokens", strings.Replace(manifestWith(""), "max_tokens: 100\n", "", 1), nil, "max_tokens", "required and positive"},
		{"temperature out of range", manifestWith("temperature: 3\n"), nil, "temperature", "outside 0..2"},
		{"temperature not a number", manifestWith("temperature: .nan\n"), nil, "temperature", "NaN is outside 0..2"},
		{"temperature infinite", manifestWith("temperature: .inf\n"), nil, "temperature", "+Inf is outside 0..2"},
		{"bad name", strings.Replace(manifestWith(""), "name: p", "name: My Prompt", 1), nil, "name", "must be lowercase"},
		{"not YAML", "name: [", nil, "", "not valid YAML"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, file, err := loadOne(t, tc.manifest, tc.files)
			var le *prompt.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("want *LoadError, got %v", err)
			}
			prefix := file + ": "
			if tc.field != "" {
				prefix += tc.field + ": "
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if strings.HasPrefix(line, prefix) && strings.Contains(line, tc.msg) {
					return
				}
			}
			t.Fatalf("no line starts with %q and contains %q:\n%v", prefix, tc.msg, err)
		})
	}
}

func TestLoadDir_AggregatesEveryProblem(t *testing.T) {
	dir := t.TempDir()
	f1 := writePrompt(t, dir, "a", strings.Replace(manifestWith("bogus: 1\n"), "version: \"1\"\n", "", 1), map[string]string{"out.json": outSchema})
	f2 := writePrompt(t, dir, "b", manifestWith(""), map[string]string{})
	writePrompt(t, dir, "c", manifestWith(""), map[string]string{"out.json": outSchema})
	f4 := writePrompt(t, dir, "d", manifestWith(""), map[string]string{"out.json": outSchema})
	if err := os.MkdirAll(filepath.Join(dir, "notes"), 0o755); err != nil { // no manifest: skipped
		t.Fatal(err)
	}
	_, err := prompt.LoadDir(dir)
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{
		f1 + ": bogus: unknown field",
		f1 + ": version: required",
		f2 + ": output_schema: open ",
		f4 + `: name: "p" is also the name of ` + filepath.Join(dir, "c", "prompt.yaml"),
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if n := len(err.(*prompt.LoadError).Problems); n != 4 {
		t.Errorf("want 4 problems, got %d:\n%v", n, err)
	}
}

func TestLoadDir_EmptyAndMissing(t *testing.T) {
	set, err := prompt.LoadDir(t.TempDir())
	if err != nil || len(set.All()) != 0 {
		t.Fatalf("empty dir: %v, %v", set, err)
	}
	if _, err := set.Get("x", ""); !errors.Is(err, prompt.ErrUnknownPrompt) || !strings.Contains(err.Error(), "loaded: none") {
		t.Fatalf("Get on empty set: %v", err)
	}
	if _, err := prompt.LoadDir(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "prompts_dir") {
		t.Fatalf("missing dir: %v", err)
	}
}

func TestLoadDir_VersionAsNumber(t *testing.T) {
	set, _, err := loadOne(t, strings.Replace(manifestWith(""), `version: "1"`, "version: 2", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := set.Get("p", ""); p.Version != "2" {
		t.Fatalf("version = %q", p.Version)
	}
}

func TestRender_Templates(t *testing.T) {
	manifest := `name: p
version: "1"
max_tokens: 10
output_schema: out.json
input_schema: in.json
messages:
  - role: system
    content: "Amount {{ .amount }}; tags {{ join \", \" .tags }}; data {{ json .data }}; {{ upper .name }}/{{ lower .name }}; opt={{ .opt | default \"none\" }}"
  - role: user
    content: "{{ .note }}"
`
	in := `{"type":"object","properties":{"amount":{},"tags":{},"data":{},"name":{},"opt":{},"note":{}}}`
	set, _, err := loadOne(t, manifest, map[string]string{"out.json": outSchema, "in.json": in})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	msgs, err := p.Render(json.RawMessage(`{"amount":12.50,"tags":["a","b"],"data":{"x":"<b>&"},"name":"Ada","note":"  hi  \n\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `Amount 12.50; tags a, b; data {"x":"<b>&"}; ADA/ada; opt=none`; msgs[0].Content != want {
		t.Fatalf("got  %q\nwant %q", msgs[0].Content, want)
	}
	if msgs[1].Content != "  hi" {
		t.Fatalf("trailing whitespace not trimmed: %q", msgs[1].Content)
	}

	tests := []struct{ name, input, field, msg string }{
		{"declared but absent value printed", `{"amount":1,"tags":[],"data":1,"name":"a","note":"n"}`, "messages[0].content", "opt="},
		{"null printed", `{"amount":null,"tags":[],"data":1,"name":"a","note":"n"}`, "messages[0].content", `rendered "<no value>": the template prints a value that is null or absent in the input (null or absent here: amount, opt)`},
		{"renders empty", `{"amount":1,"tags":[],"data":1,"name":"a","note":"   "}`, "messages[1].content", "rendered empty"},
		{"function on null", `{"amount":1,"tags":[],"data":1,"note":"n"}`, "messages[0].content", "upper: value is null"},
		{"not an object", `[1]`, "input", "input must be a JSON object, got an array"},
		{"not JSON", `{`, "input", "input is not JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Render(json.RawMessage(tc.input))
			var re *prompt.RenderError
			if tc.name == "declared but absent value printed" {
				if err != nil {
					t.Fatalf("default on declared absent key: %v", err)
				}
				return
			}
			if !errors.As(err, &re) || re.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("want RenderError at %s containing %q, got %v", tc.field, tc.msg, err)
			}
		})
	}
}

func TestValidateInput(t *testing.T) {
	p, _ := loadExamples(t).Get("triage", "")
	if err := p.ValidateInput(json.RawMessage(`{"subject":"s","body":"b","customer_tier":"pro"}`)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, input string
		want        []string // rule@path
	}{
		{"missing required", `{}`, []string{"schema.required@/body", "schema.required@/subject"}},
		{"several problems", `{"subject":"","body":7,"customer_tier":"gold","foo":1}`,
			[]string{"schema.type@/body", "schema.enum@/customer_tier", "schema.additionalProperties@/foo", "schema.minLength@/subject"}},
		{"not an object", `"hello"`, []string{"input.type@$"}},
		{"not JSON", `{"subject":`, []string{"json.syntax@$"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := p.ValidateInput(json.RawMessage(tc.input))
			var ie *prompt.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("want *InputError, got %v", err)
			}
			var got []string
			for _, v := range ie.Violations {
				got = append(got, v.Rule+"@"+v.Path)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("got %v\nwant %v\n%v", got, tc.want, err)
			}
			if !strings.Contains(err.Error(), "triage@3") {
				t.Fatalf("error does not name the prompt: %v", err)
			}
		})
	}
	// Without an input schema any object is accepted.
	set, _, err := loadOne(t, manifestWith(""), nil)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := set.Get("p", "")
	if err := q.ValidateInput(json.RawMessage(`{"anything":1}`)); err != nil {
		t.Fatal(err)
	}
}

func TestProviderResponseFormat(t *testing.T) {
	p, _ := loadExamples(t).Get("invoice", "")
	rf := p.ProviderResponseFormat()
	if rf == nil || rf.Type != "json_schema" || rf.Name != "invoice" || rf.Strict {
		t.Fatalf("format: %+v", rf)
	}
	var schema map[string]any
	if err := json.Unmarshal(rf.Schema, &schema); err != nil || schema["type"] != "object" || strings.Contains(string(rf.Schema), "\n") {
		t.Fatalf("schema must be the compact output schema: %v %s", err, rf.Schema)
	}
	// The router's window check counts this text for every job: it is the
	// schema sent, made once.
	if p.FormatText() != string(rf.Schema) {
		t.Fatalf("FormatText %q, want the schema sent %q", p.FormatText(), rf.Schema)
	}
	for format, want := range map[string]string{"none": "", "json_object": "json_object"} {
		set, _, err := loadOne(t, manifestWith("response_format: "+format+"\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		q, _ := set.Get("p", "")
		rf := q.ProviderResponseFormat()
		if (want == "") != (rf == nil) || (rf != nil && rf.Type != want) {
			t.Fatalf("%s: got %+v", format, rf)
		}
		if q.FormatText() != "" {
			t.Fatalf("%s: FormatText %q, want none (no schema is sent)", format, q.FormatText())
		}
	}
}

func TestRenderConcurrent(t *testing.T) {
	p, _ := loadExamples(t).Get("triage", "")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				in := `{"subject":"s` + string(rune('a'+i)) + `","body":"b"}`
				msgs, err := p.Render(json.RawMessage(in))
				if err != nil || !strings.Contains(msgs[1].Content, "Subject: s"+string(rune('a'+i))) {
					t.Errorf("render %d: %v %v", i, err, msgs)
					return
				}
			}
		}()
	}
	wg.Wait()
}
