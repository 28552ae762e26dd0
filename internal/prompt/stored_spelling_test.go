package prompt_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/jsontext"
	"github.com/routerhq/router/internal/providers"
)

// renderOutcome is what a render gives: the messages' text, or the refusal.
func renderOutcome(t *testing.T, render func() (any, error)) string {
	t.Helper()
	msgs, err := render()
	if err != nil {
		return "refused: " + err.Error()
	}
	b, _ := json.Marshal(msgs)
	return string(b)
}

// A job's input is stored as jsonb, and a job rendered again from its row (a
// retry, recovery, a drain hand-over) sees PostgreSQL's spelling of its
// numbers, exponents written out. The first render (POST /v1/jobs, from the
// input as sent: RenderParsed over what ParseInput gave) sees the same
// spelling, so an input whose 1e300 printed once per element passes 16 MiB
// only written out is refused at creation, not accepted then failed on every
// later run (rprompt10 F1: accepted, then "the prompt cannot be rendered").
func TestRender_FirstRenderSeesTheStoredSpelling(t *testing.T) {
	content := `Answer in JSON. Rates:{{ range .items }} {{ $.rate }}{{ end }}`
	m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
	set, _, err := loadOne(t, m, nil)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	p, _ := set.Get("p", "")
	items := strings.Repeat("0,", 60000) + "0"
	sent := `{"rate":1e300,"items":[` + items + `]}`
	stored := `{"rate":1` + strings.Repeat("0", 300) + `,"items":[` + items + `]}` // what jsonb gives back
	if e := jsontext.CheckNumbers([]byte(sent)); e != nil {
		t.Fatalf("the API refuses the input before storing it: %v", e)
	}
	later := renderOutcome(t, func() (any, error) { return p.Render([]byte(stored)) })
	if !strings.Contains(later, "16 MiB") {
		t.Fatalf("the stored input renders (%.80s): the test's premise is wrong", later)
	}
	parsed, err := p.ParseInput([]byte(sent))
	if err != nil {
		t.Fatal(err)
	}
	if first := renderOutcome(t, func() (any, error) { return p.RenderParsed(parsed, []byte(sent)) }); first != later {
		t.Errorf("the first render (POST /v1/jobs) gives\n%.300s\nand every later render, from the stored input,\n%.300s", first, later)
	}
	if first := renderOutcome(t, func() (any, error) { return p.Render([]byte(sent)) }); first != later {
		t.Errorf("Render of the input as sent gives\n%.300s\nand of the stored input\n%.300s", first, later)
	}
}

// Every spelling jsonb changes renders as jsonb gives it back, wherever the
// number is (top level, in arrays and objects, {{ json . }}), and the
// caller's parsed input is left as it was (the fingerprint was made from it).
func TestRender_NumbersRenderAsStored(t *testing.T) {
	content := `Answer in JSON: {{ .a }} {{ .b }} {{ .c }} {{ .d }} {{ index .l 1 }} {{ .o.x }} {{ .s }} {{ .n }} {{ json . }}`
	m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
	set, _, err := loadOne(t, m, nil)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	p, _ := set.Get("p", "")
	sent := `{"a":1e2,"b":1.5E-3,"c":100e-2,"d":-0,"l":[1,-0.0e-1],"o":{"x":-1.25e+1},"s":"2e4 -0","n":12.50}`
	want := `Answer in JSON: 100 0.0015 1.00 0 0.00 -12.5 2e4 -0 12.50 {"a":100,"b":0.0015,"c":1.00,"d":0,"l":[1,0.00],"n":12.50,"o":{"x":-12.5},"s":"2e4 -0"}`
	for name, render := range map[string]func() ([]providers.Message, error){
		"Render": func() ([]providers.Message, error) { return p.Render([]byte(sent)) },
		"RenderParsed": func() ([]providers.Message, error) {
			parsed, err := p.ParseInput([]byte(sent))
			if err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(parsed)
			msgs, err := p.RenderParsed(parsed, []byte(sent))
			if after, _ := json.Marshal(parsed); string(after) != string(before) {
				t.Errorf("RenderParsed changed the caller's input: %s, was %s", after, before)
			}
			return msgs, err
		},
	} {
		msgs, err := render()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := msgs[0].Content; got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
