package prompt_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
)

// MaxRenderedBytes bounds what a render writes, not what it does. A template
// that relates each element of an input array to every other one — the
// tasks that block each task, the children of each node, the line items that
// repeat an earlier one — does len² steps however little it prints, and the
// caller chooses len. Here 1,500 tasks (a 50 KB input) make 2.25 million
// comparisons and print about 6 KB: about 9 s of CPU on the reviewer's
// 2-core VM (2,000 tasks, 69 KB: 16 s; a 1 MiB body of ~30,000 tasks: about
// an hour). POST /v1/jobs renders on the request path (checkJob → planJob →
// Exec.Plan → specFor → RenderParsed), before anything is stored or counted,
// and nothing stops it: not the caller leaving, not the token check, which
// runs on the rendered text afterwards. Each resend of the same request
// renders again. A render must be bounded in the work it does, as it is in
// the bytes it writes: refused with a RenderError once it passes a budget.
func TestRenderIsBoundedInWorkNotOnlyInBytes(t *testing.T) {
	manifest := `name: p
version: "1"
max_tokens: 100
output_schema: out.json
messages:
  - role: user
    content: |
      Answer in JSON. The tasks, and what blocks each:
      {{ range $t := .tasks }}- {{ $t.name }}{{ range $.tasks }}{{ if eq .blocks $t.id }} (blocked by {{ .name }}){{ end }}{{ end }}
      {{ end }}
`
	set, _, err := loadOne(t, manifest, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	tasks := make([]map[string]any, 1500)
	for i := range tasks {
		tasks[i] = map[string]any{"id": i, "name": "t", "blocks": -1}
	}
	input, _ := json.Marshal(map[string]any{"tasks": tasks})

	start := time.Now()
	msgs, err := p.Render(input)
	took := time.Since(start) // logged only: the assertion is on the outcome
	var re *prompt.RenderError
	if err == nil {
		t.Fatalf("a %d-byte input made the template compare %d pairs (%d bytes rendered, %v of CPU on the request path): "+
			"want a RenderError once the render passes a bound on its work", len(input), len(tasks)*len(tasks), len(msgs[0].Content), took)
	}
	if !errors.As(err, &re) {
		t.Fatalf("refused with %T, want a *prompt.RenderError (422 invalid-input on POST /v1/jobs): %v", err, err)
	}
	t.Logf("refused after %v: %v", took, err)
}
