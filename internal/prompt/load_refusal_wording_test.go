package prompt_test

import (
	"strings"
	"testing"
)

// The load-time refusals of a call of an undefined template and of a printf
// whose literal format does not fit its arguments said "so every job would
// fail to render": untrue for one inside an {{ if }}, {{ range }} or
// {{ with }} branch (or an unused define), which fails only the jobs that
// reach it. They say so, and that the prompt is at fault; they still name the
// file, field, place and fix. Found by review.
func TestLoadRefusalsSayOnlyJobsReachingTheCallFail(t *testing.T) {
	for _, c := range []struct{ content, want, fix string }{
		{`{{ .q }}{{ if .legacy }}{{ template "old" . }}{{ end }}`, `{{ template "old" }} (content line 1, column 53) calls a template defined nowhere in this message`, `{{ define "old" }}`},
		{`{{ if .x }}{{ printf "%d of %s" .n }}{{ end }}`, `{{ printf "%d of %s" .n }} (content line 1, column 31) has more verbs than its 1 arguments`, `give printf one argument for each verb`},
		{`{{ range .xs }}{{ printf "%d" . . }}{{ end }}`, `has fewer verbs than its 2 arguments`, `remove the extra arguments`},
		{`{{ with .x }}{{ printf "100%" }}{{ end }}`, `ends its format with a lone "%"`, `write "%%" for a percent sign`},
		{`{{ printf "%[2]d" .n }}`, `names none of its 1 arguments`, `number them from [1]`},
	} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'Answer in JSON: `+c.content+`'`, 1)
		_, file, err := loadOne(t, m, nil)
		if err == nil {
			t.Errorf("%s loaded", c.content)
			continue
		}
		msg := err.Error()
		for _, w := range []string{file + ": messages[0].content: ", c.want, ": every job that reaches it would fail to render, through the prompt's fault, not the input's; ", c.fix} {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: LoadDir = %v; want %q in it", c.content, err, w)
			}
		}
		if strings.Contains(msg, "so every job would fail") {
			t.Errorf("%s: LoadDir = %v; says every job would fail", c.content, err)
		}
	}
}
