package prompt_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// renderWork loads a prompt whose user message is content and renders it
// over input.
func renderWork(t *testing.T, content string, input any) ([]string, error) {
	t.Helper()
	manifest := "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\nmessages:\n  - role: user\n    content: '" + content + "'\n"
	set, _, err := loadOne(t, manifest, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	raw, _ := json.Marshal(input)
	msgs, err := p.Render(raw)
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out, err
}

func wantTooMuchWork(t *testing.T, msgs []string, err error) {
	t.Helper()
	var re *prompt.RenderError
	if !errors.As(err, &re) {
		t.Fatalf("rendered %d bytes, err %v: want a *prompt.RenderError once the render passes its step budget", len(strings.Join(msgs, "")), err)
	}
	if !strings.Contains(err.Error(), "too much work") || !strings.Contains(err.Error(), "send a smaller input") {
		t.Fatalf("refused with %q: want it to say the template does too much work and what to do", err)
	}
}

// A nested range that calls no function and prints nothing still does len²
// steps: each iteration of a range counts, not only the function calls.
func TestRenderCountsRangeIterationsWithoutFunctions(t *testing.T) {
	msgs, err := renderWork(t, `Answer in JSON.{{ range .a }}{{ range $.a }}{{ end }}{{ end }}`, map[string]any{"a": make([]int, 1001)})
	wantTooMuchWork(t, msgs, err)
}

// A template that calls itself twice per level of the input does 2^depth
// calls with no range and no function: each call of a defined template
// counts.
func TestRenderCountsTemplateCalls(t *testing.T) {
	var in any = map[string]any{"n": nil}
	for range 21 {
		in = map[string]any{"n": in}
	}
	msgs, err := renderWork(t, `Answer in JSON.{{ define "r" }}{{ with .n }}{{ template "r" . }}{{ template "r" . }}{{ end }}{{ end }}{{ template "r" . }}`, in)
	wantTooMuchWork(t, msgs, err)
}

// Accumulating into a variable copies len² bytes and prints a number: the
// text a function returns counts.
func TestRenderCountsTheTextFunctionsReturn(t *testing.T) {
	names := make([]string, 800)
	for i := range names {
		names[i] = strings.Repeat("n", 400)
	}
	msgs, err := renderWork(t, `Answer in JSON.{{ $acc := "" }}{{ range .names }}{{ $acc = printf "%s, %s" $acc . }}{{ end }} {{ len $acc }}`, map[string]any{"names": names})
	wantTooMuchWork(t, msgs, err)
}

// {{ len }} of a document in a range counts its characters on each
// iteration: the text a function reads counts.
func TestRenderCountsTheTextFunctionsRead(t *testing.T) {
	msgs, err := renderWork(t, `Answer in JSON.{{ range .a }}{{ if lt (len $.doc) 0 }}x{{ end }}{{ end }}`,
		map[string]any{"a": make([]int, 2000), "doc": strings.Repeat("d", 200_000)})
	wantTooMuchWork(t, msgs, err)
}

// A template that visits each element of a 1 MiB input once, calling two
// functions for each, stays well within the budget.
func TestRenderOfEachElementOnceStaysWithinTheBudget(t *testing.T) {
	items := make([]map[string]any, 45000)
	for i := range items {
		items[i] = map[string]any{"name": "w", "price": 1}
	}
	msgs, err := renderWork(t, `Answer in JSON.{{ range .items }}{{ upper .name }} {{ printf "%d" .price }}|{{ end }}`, map[string]any{"items": items})
	if err != nil {
		t.Fatalf("an input of %d elements, each visited once (3 steps each): %v", len(items), err)
	}
	if want := 15 + 45000*len("W 1|"); len(msgs[0]) != want {
		t.Fatalf("rendered %d bytes, want %d", len(msgs[0]), want)
	}
}

// Each render counts its own steps: two renders of 600,000 steps each, one
// after the other and side by side, are not refused for their sum.
func TestRenderCountsEachRenderApart(t *testing.T) {
	manifest := "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\nmessages:\n  - role: user\n    content: '" +
		`Answer in JSON.{{ range .a }}{{ if print $.big | eq "" }}x{{ end }}{{ end }}` + "'\n"
	set, _, err := loadOne(t, manifest, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	// Each print reads and returns 150 KiB: 1 + 1200 steps, 500 times.
	raw, _ := json.Marshal(map[string]any{"a": make([]int, 500), "big": strings.Repeat("b", 150<<10)})
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			for range 2 {
				if _, err := p.Render(raw); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("a render within the budget refused: %v", err)
		}
	}
}
