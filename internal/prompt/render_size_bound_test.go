package prompt_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// A prompt that prints one input value once per element of another — the
// document once per question, a table's header once per row — renders
// len(document) × len(questions) bytes. The caller chooses both: a request
// of 48 KiB here renders 128 MiB (and a 1 MiB body, within
// http.max_body_bytes, renders tens of GiB), all of it held in memory by
// Render on the request path (POST /v1/jobs plans the job, which renders it)
// before anything looks at its size. The rendered prompt must be bounded:
// refused with a RenderError, without building it, well before it is
// larger than any model's context window (a few MiB of text).
func TestRenderIsBoundedWhateverTheInputMultipliesTo(t *testing.T) {
	manifest := `name: p
version: "1"
max_tokens: 100
output_schema: out.json
messages:
  - role: system
    content: Answer each question about the document, in JSON.
  - role: user
    content: |
      {{ range .questions }}Document: {{ json $.document }}
      Question: {{ json . }}
      {{ end }}
`
	set, _, err := loadOne(t, manifest, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	questions := make([]string, 8192)
	for i := range questions {
		questions[i] = "q"
	}
	input, _ := json.Marshal(map[string]any{"document": strings.Repeat("a", 16<<10), "questions": questions})
	t.Logf("input: %d bytes", len(input))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	msgs, err := p.Render(input)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	rendered := 0
	for _, m := range msgs {
		rendered += len(m.Content)
	}
	t.Logf("rendered %d bytes, allocated %d MiB, err %v", rendered, allocated>>20, err)
	if err == nil {
		t.Fatalf("a %d-byte input rendered a %d MiB prompt (%d MiB allocated): want a RenderError once the rendered text passes a bound", len(input), rendered>>20, allocated>>20)
	}
	// Stopped at the bound, the render allocates about 5 times the bound
	// (the output buffer's growth, each json's encoding, fmt's copy), about
	// 10 times under -race, whose sync.Pool drops pooled buffers; rendering
	// it whole and checking afterwards allocates 740 MiB.
	if allocated > 256<<20 {
		t.Fatalf("refusing it allocated %d MiB, more than the 128 MiB prompt it refused twice over: the bound must stop the render, not check its result", allocated>>20)
	}
}
