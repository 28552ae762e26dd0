package prompt_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// loadProblem loads manifest (with files) and returns the LoadError's line
// for field, failing when there is none.
func loadProblem(t *testing.T, manifest string, files map[string]string, field string) string {
	t.Helper()
	_, file, err := loadOne(t, manifest, files)
	var le *prompt.LoadError
	if !errors.As(err, &le) {
		t.Fatalf("want *LoadError, got %v", err)
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if strings.HasPrefix(line, file+": "+field+": ") {
			return line
		}
	}
	t.Fatalf("no problem of %s:\n%v", field, err)
	return ""
}

// json_object needs "JSON" in what the messages say: the check reads the
// template's text (and the string literals it prints), not its source, where
// {{ json .items }} or a {{/* JSON */}} comment said it while no rendered
// message did.
func TestLoadDir_JSONObjectNeedsJSONInTheRenderedText(t *testing.T) {
	for _, content := range []string{`Items: {{ json .items }}`, `Answer. {{/* JSON */}}{{ .q }}`, `{{ if eq .kind "json" }}x{{ end }}{{ .q }}`} {
		m := strings.Replace(manifestWith("response_format: json_object\n"), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
		if line := loadProblem(t, m, nil, "response_format"); !strings.Contains(line, `needs the word "JSON"`) {
			t.Errorf("%s: %s", content, line)
		}
	}
	for _, content := range []string{`Reply in json. {{ .q }}`, `{{ printf "Answer in JSON: %s" .q }}`, `{{ if .q }}Answer in JSON{{ else }}JSON too{{ end }}`,
		`{{ define "x" }}JSON please{{ end }}{{ template "x" }} {{ .q }}`} {
		m := strings.Replace(manifestWith("response_format: json_object\n"), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
		if _, _, err := loadOne(t, m, nil); err != nil {
			t.Errorf("%s: %v", content, err)
		}
	}
}

// A message that is only a template comment rendered empty for every input,
// and each job then failed 422 "rendered empty for this input", blaming the
// caller: it is a load problem.
func TestLoadDir_MessageThatRendersEmptyForEveryInput(t *testing.T) {
	for _, content := range []string{`{{/* TODO */}}`, `{{- /* TODO */ -}}  `, `{{/* a */}} {{/* b */}}`} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
		if line := loadProblem(t, m, nil, "messages[0].content"); !strings.Contains(line, "renders empty for every input") {
			t.Errorf("%q: %s", content, line)
		}
	}
	// Text, or an action, that may print something loads.
	for _, content := range []string{`{{/* TODO */}}Hello`, `{{ .q }}`, `{{ if .q }}yes{{ end }}`} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
		if _, _, err := loadOne(t, m, nil); err != nil {
			t.Errorf("%q: %v", content, err)
		}
	}
}

// A "format" the router does not know is asserted nowhere: in a prompt's
// schema (which docs/prompts.md says asserts formats) a misspelt one is a load
// problem naming the closest known format.
func TestLoadDir_UnknownFormatInAPromptSchema(t *testing.T) {
	for format, near := range map[string]string{"datetime": "date-time", "Date": "date", "e-mail": "email", "url": "uri"} {
		schema := `{"type":"object","properties":{"when":{"type":"string","format":"` + format + `"}}}`
		line := loadProblem(t, manifestWith(""), map[string]string{"out.json": schema}, "output_schema")
		if !strings.Contains(line, `format "`+format+`" at #/properties/when`) || !strings.Contains(line, `did you mean "`+near+`"?`) {
			t.Errorf("%s: %s", format, line)
		}
	}
	// The same in the input schema.
	line := loadProblem(t, manifestWith("input_schema: in.json\n"), map[string]string{"out.json": outSchema,
		"in.json": `{"type":"object","properties":{"q":{"type":"string","format":"datetime"}}}`}, "input_schema")
	if !strings.Contains(line, `did you mean "date-time"?`) {
		t.Errorf("input schema: %s", line)
	}
}

// A prompt directory that is a symbolic link to a directory is loaded: it was
// skipped (a link is not a directory entry of type directory), and its prompt
// was not served.
func TestLoadDir_FollowsASymlinkedPromptDirectory(t *testing.T) {
	elsewhere := t.TempDir()
	writePrompt(t, elsewhere, "p", manifestWith(""), map[string]string{"out.json": outSchema})
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(elsewhere, "p"), filepath.Join(dir, "p")); err != nil {
		t.Fatal(err)
	}
	set, err := prompt.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Get("p", ""); err != nil {
		t.Fatalf("the linked prompt is not loaded: %v", err)
	}
}
