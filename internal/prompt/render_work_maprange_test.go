package prompt_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// objectOf is {"k00000":0,"k00001":0,...} with n keys, as JSON.
func objectOf(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%05d":0`, i)
	}
	b.WriteByte('}')
	return b.String()
}

// renderRaw loads a prompt whose user message is content and renders it over
// the JSON text input.
func renderRaw(t *testing.T, content, input string) ([]string, error) {
	t.Helper()
	manifest := "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\nmessages:\n  - role: user\n    content: '" + content + "'\n"
	set, _, err := loadOne(t, manifest, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	msgs, err := p.Render([]byte(input))
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out, err
}

// docs/prompts.md §2: "A render's work is bounded too, at 1,000,000 steps
// (prompt.MaxRenderSteps)", at worst "about 2 s of one core". A range over
// an object sorts all its keys before the first iteration (text/template
// ranges over a map in key order), however few iterations run: a range over
// $.obj left at its first element ({{ break }}: "is any key present", "the
// first entry") inside a range over another array of the input sorts every
// key once per element, and the caller chooses both sizes. Counted a step
// per iteration run, 40 elements and 40,000 keys (a 400 KB input) were 81
// steps for 1.6 million keys sorted, and a body under 1 MiB (200,000
// elements) kept the render busy for hours. Counted a step or more per key
// sorted, the render passes the bound at the 13th element, whatever the
// number of elements, and is refused as other quadratic templates are.
func TestRenderWorkCountsTheKeysARangeOverAnObjectSorts(t *testing.T) {
	const keys, items = 40000, 40
	input := `{"obj":` + objectOf(keys) + `,"items":[` + strings.Repeat("0,", items-1) + `0]}`
	msgs, err := renderRaw(t, `Answer in JSON.{{ range .items }}{{ range $k, $v := $.obj }}{{ break }}{{ end }}{{ end }}`, input)
	wantTooMuchWork(t, msgs, err)
}

// Without {{ break }}, each key the range visits counted, but not the sort
// before the first: 500 ranges over 1,000 keys were 500,500 steps. The sort
// counts too (1,625 steps for 1,000 keys), and the render passes the bound.
func TestRenderWorkCountsTheSortOfARangeOverAnObjectRunToTheEnd(t *testing.T) {
	const keys, items = 1000, 500
	input := `{"obj":` + objectOf(keys) + `,"items":[` + strings.Repeat("0,", items-1) + `0]}`
	msgs, err := renderRaw(t, `Answer in JSON.{{ range .items }}{{ range $.obj }}{{ end }}{{ end }}`, input)
	wantTooMuchWork(t, msgs, err)
}

// A range over an array costs nothing to start: its iterations are its
// steps, not counted twice. 999 ranges over 999 elements are 998,000 steps,
// within the bound.
func TestRenderWorkCountsARangeOverAnArrayOnce(t *testing.T) {
	input := `{"a":[` + strings.Repeat("0,", 998) + `0]}`
	msgs, err := renderRaw(t, `Answer in JSON.{{ range .a }}{{ range $.a }}{{ end }}{{ end }}`, input)
	if err != nil {
		t.Fatalf("998,000 steps, within the bound of %d: %v", prompt.MaxRenderSteps, err)
	}
	if msgs[0] != "Answer in JSON." {
		t.Fatalf("rendered %q", msgs[0])
	}
}

// Ranges over many small objects (each element's fields) stay far within the
// bound: 20,000 of 4 keys are 180,000 steps.
func TestRenderWorkOfRangesOverSmallObjectsStaysWithinTheBound(t *testing.T) {
	input := `{"items":[` + strings.Repeat(`{"a":1,"b":2,"c":3,"d":4},`, 19999) + `{"a":1,"b":2,"c":3,"d":4}]}`
	msgs, err := renderRaw(t, `Answer in JSON.{{ range .items }}{{ range $k, $v := . }}{{ $k }}{{ $v }}{{ end }}|{{ end }}`, input)
	if err != nil {
		t.Fatalf("20,000 ranges over 4 keys: %v", err)
	}
	if want := "Answer in JSON." + strings.Repeat("a1b2c3d4|", 20000); msgs[0] != want {
		t.Fatalf("rendered %d bytes, want %d", len(msgs[0]), len(want))
	}
}

// A range's pipeline that assigns a variable runs once: the count does not
// evaluate it a second time. The keys it sorts count all the same.
func TestRenderWorkCountsARangeWhosePipelineAssignsOnce(t *testing.T) {
	content := `Answer in JSON.{{ $acc := "" }}{{ range .items }}{{ range $k, $v := and ($acc = printf "%s+" $acc) $.obj }}{{ $k }}{{ break }}{{ end }}{{ end }} {{ $acc }}`
	msgs, err := renderRaw(t, content, `{"obj":{"b":1,"a":2},"items":[0,0]}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Answer in JSON.aa ++"; msgs[0] != want {
		t.Fatalf("rendered %q, want %q", msgs[0], want)
	}
	msgs, err = renderRaw(t, content, `{"obj":`+objectOf(40000)+`,"items":[`+strings.Repeat("0,", 39)+`0]}`)
	wantTooMuchWork(t, msgs, err)
}

// The counting changes no error: a range over a string fails as
// text/template says, naming the range's own pipeline. (A pipeline that
// assigns a variable ends with the counting call, which the error names.)
func TestRenderWorkKeepsTheRangeErrors(t *testing.T) {
	_, err := renderRaw(t, `Answer in JSON.{{ range .s }}{{ . }}{{ end }}`, `{"s":"text"}`)
	if err == nil || !strings.Contains(err.Error(), "at <.s>: range can't iterate over text") {
		t.Fatalf("err %v, want text/template's range error at <.s>", err)
	}
	_, err = renderRaw(t, `Answer in JSON.{{ $n := "" }}{{ range and ($n = "x") .s }}{{ . }}{{ end }}`, `{"s":"text"}`)
	if err == nil || !strings.Contains(err.Error(), "range can't iterate over text") {
		t.Fatalf("err %v, want text/template's range error", err)
	}
}
