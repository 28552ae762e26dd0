package prompt_test

import (
	"strings"
	"testing"
)

// printf checked only an input number against its verb: a string under %d,
// a boolean under %f, a missing or an extra operand put fmt's notes
// ("%!d(string=12)", "%!d(MISSING)", "%!(EXTRA string=12)") into the prompt.
// They are refused, naming the verb. Found by review.
func TestPrintfMismatchIsRefused(t *testing.T) {
	in := `{"type":"object","properties":{"q":{"type":"string"},"b":{"type":"boolean"},"n":{"type":"number"},"f":{"type":"string"}}}`
	for _, c := range []struct{ content, format, want string }{
		{`{{ printf "%d items" .q }}`, "", `%d cannot format the string 12`},
		{`{{ printf "%f" .b }}`, "", `%f cannot format the boolean true`},
		{`{{ printf .f .n }}`, "%d and %d", `%d has no argument`},
		{`{{ printf .f .n .q }}`, "%d", `more arguments than the format has verbs`},
		{`{{ .q | printf .f }}`, "%s %s", `%s has no argument`},
		{`{{ printf .f }}`, "100%", `lone "%"`},
	} {
		set, _, err := loadOne(t, "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\ninput_schema: in.json\nmessages:\n  - role: user\n    content: 'Answer in JSON: "+c.content+"'\n",
			map[string]string{"out.json": outSchema, "in.json": in})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := set.Get("p", "")
		msgs, err := p.Render([]byte(`{"q":"12","b":true,"n":3,"f":"` + c.format + `"}`))
		if err == nil {
			t.Errorf("%s rendered %q", c.content, msgs[0].Content)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q lacks %q", c.content, err, c.want)
		}
	}
}

// A literal format that does not fit the number of printf's arguments is
// refused at load: every render would fail.
func TestPrintfArityIsCheckedAtLoad(t *testing.T) {
	for _, c := range []struct{ content, want string }{
		{`{{ printf "%d and %d" .n }}`, `{{ printf "%d and %d" .n }} (content line 1, column 20) has more verbs than its 1 arguments`},
		{`{{ printf "%d" .n .q }}`, `has fewer verbs than its 2 arguments`},
		{`{{ .q | printf "%s %s" }}`, `has more verbs than its 1 arguments`},
		{`{{ if .q }}{{ (printf "%s" .q .q) | upper }}{{ end }}`, `has fewer verbs than its 2 arguments`},
		{`{{ printf "100%" }}`, `lone "%"`},
		{`{{ printf "%[3]s" .q .q }}`, `argument index`},
	} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'Answer in JSON: `+c.content+`'`, 1)
		_, file, err := loadOne(t, m, nil)
		if err == nil || !strings.Contains(err.Error(), file+": messages[0].content: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: LoadDir = %v; want %q", c.content, err, c.want)
		}
	}
	for _, c := range []string{`{{ printf "%d%%" .n }}`, `{{ .n | printf "%d" }}`, `{{ printf "%[1]s %[1]s" .q }}`, `{{ printf "%*d" 5 .n }}`, `{{ printf "%%!" }}`, `{{ printf .q }}`} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'Answer in JSON: `+c+`'`, 1)
		if _, _, err := loadOne(t, m, nil); err != nil {
			t.Errorf("%s: LoadDir = %v", c, err)
		}
	}
}

// What fits prints as before, and "%!" the prompt or the caller writes
// itself is not taken for fmt's note.
func TestPrintfFittingVerbsAndOwnPercentBang(t *testing.T) {
	set, _, err := loadOne(t, "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\nmessages:\n  - role: user\n    content: 'Answer in JSON: {{ printf \"%s|%d|%.1f|%v|%t|%%\" .q .n .n .q .b }} {{ printf \"%s\" .bang }} {{ printf \"%%!\" }}'\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	msgs, err := p.Render([]byte(`{"q":"12","n":3,"b":true,"bang":"wow%!d(x)"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Answer in JSON: 12|3|3.0|12|true|% wow%!d(x) %!"; msgs[0].Content != want {
		t.Fatalf("rendered %q, want %q", msgs[0].Content, want)
	}
}
