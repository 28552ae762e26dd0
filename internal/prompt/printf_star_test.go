package prompt_test

import (
	"strings"
	"testing"
)

// A "*" width or precision takes a Go int from printf's arguments; a value
// of the input is never one (an input number is a JSON number), so
// {{ printf "%*d" .w .n }} loaded and then failed every render that reached
// it with "fmt could not apply the format (it wrote "%!(BADWIDTH)")", blamed
// on nothing in particular. It is refused at load, naming the argument.
func TestPrintfStarFromTheInputIsRefusedAtLoad(t *testing.T) {
	for _, c := range []struct{ content, want string }{
		{`{{ printf "%*d" .w .n }}`, `{{ printf "%*d" .w .n }} (content line 1, column 20) takes a "*" width from .w, a value of the input, which is never the Go int fmt needs there (it would print %!(BADWIDTH)): every job that reaches it would fail to render, through the prompt's fault, not the input's; write the width in the format, like "%5d"`},
		{`{{ if .q }}{{ printf "%-8s|%.*f" .q $.p .n }}{{ end }}`, `takes a "*" precision from $.p, a value of the input, which is never the Go int fmt needs there (it would print %!(BADPREC))`},
		{`{{ range .xs }}{{ printf "%[2]*[1]d" .n .cfg.w }}{{ end }}`, `takes a "*" width from .cfg.w`},
		{`{{ printf "%*s" "5" .q }}`, `takes a "*" width from "5", which is never the Go int fmt needs there`},
	} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'Answer in JSON: `+c.content+`'`, 1)
		line := loadProblem(t, m, nil, "messages[0].content")
		if !strings.Contains(line, c.want) {
			t.Errorf("%s:\n got %s\nwant %s in it", c.content, line, c.want)
		}
	}
	// A width from a literal or from len is a Go int: these load.
	for _, c := range []string{`{{ printf "%*d" 5 .n }}`, `{{ printf "%-*s|" (len .q) .q }}`, `{{ range $i, $x := .xs }}{{ printf "%*s" $i $x }}{{ end }}`, `{{ printf "%*d" .w }}`} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'Answer in JSON: `+c+`'`, 1)
		_, _, err := loadOne(t, m, nil)
		if c == `{{ printf "%*d" .w }}` { // one argument for two uses: the arity check's
			if err == nil || !strings.Contains(err.Error(), "has more verbs than its 1 arguments") {
				t.Errorf("%s: LoadDir = %v", c, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: LoadDir = %v", c, err)
		}
	}
}

// Where load cannot tell ({{ printf "%*d" (index . "w") .n }}), the render
// error says what a "*" takes and how to fix the prompt, rather than only
// fmt's note.
func TestPrintfBadWidthAtRenderSaysWhatAStarTakes(t *testing.T) {
	m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'Answer in JSON: {{ .q }}{{ printf "%*d|%.*f" (index . "w") 1 2 3.5 }}'`, 1)
	set, _, err := loadOne(t, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	_, err = p.Render([]byte(`{"q":"x","w":5}`))
	want := `printf "%*d|%.*f": a "*" width or precision takes a whole number from the template, such as a literal 5 or (len .x), at most 1000000; a value of the input is never one (fmt wrote "%!(BADWIDTH)"); write the width or precision in the format, like "%5d" or "%.2f"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Render = %v; want %q in it", err, want)
	}
}
