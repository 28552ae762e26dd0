package prompt_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/routerhq/router/internal/prompt"
)

// renderOne loads a prompt whose one message is content and renders input.
func renderOne(t *testing.T, content, input string) (string, error) {
	t.Helper()
	m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'`+content+`'`, 1)
	set, _, err := loadOne(t, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := set.Get("p", "")
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := p.Render([]byte(input))
	if err != nil {
		return "", err
	}
	return msgs[0].Content, nil
}

// {{ slice .body 0 N }} was text/template's built-in, which cuts a string at
// byte offsets: over "héllo" it cut the é in two and the provider was sent
// text that is not UTF-8; over a body shorter than N bytes it failed the
// render. It cuts by characters now, clamped to the length.
func TestSliceCutsTextByCharacters(t *testing.T) {
	for _, tc := range []struct{ content, input, want string }{
		{`Ticket: {{ slice .q 0 2 }}`, `{"q":"héllo"}`, "Ticket: hé"},
		{`Ticket: {{ slice .q 0 2000 }}`, `{"q":"héllo"}`, "Ticket: héllo"},
		{`Ticket: {{ slice .q 1 }}`, `{"q":"日本語"}`, "Ticket: 本語"},
		{`Ticket: {{ slice .q 4 9 }}x`, `{"q":"日本語"}`, "Ticket: x"},
		{`Ticket: {{ slice .q .n 2 }}`, `{"q":"héllo","n":1}`, "Ticket: é"},
		{`Tags: {{ join "," (slice .q 0 5) }}`, `{"q":["a","b"]}`, "Tags: a,b"},
		{`Tags: {{ join "," (slice .q 1 2) }}`, `{"q":["a","b","c"]}`, "Tags: b"},
	} {
		got, err := renderOne(t, tc.content, tc.input)
		if err != nil {
			t.Errorf("%s over %s: %v", tc.content, tc.input, err)
			continue
		}
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("%s over %s = %q, want %q", tc.content, tc.input, got, tc.want)
		}
	}
	for _, tc := range []struct{ content, input, want string }{
		{`{{ slice .q 3 1 }}`, `{"q":"héllo"}`, "from 3 is greater than to 1"},
		{`{{ slice .q 0 1 2 }}`, `{"q":"héllo"}`, "give at most two, from and to"},
		{`{{ slice .q .n }}`, `{"q":"héllo","n":1.5}`, "1.5 is not a whole number"},
		{`{{ slice .q 0 1 }}`, `{"q":null}`, "null or absent"},
		{`{{ slice .q 0 1 }}`, `{"q":{"a":1}}`, "want a string or an array, got an object"},
	} {
		_, err := renderOne(t, tc.content, tc.input)
		var re *prompt.RenderError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s over %s: %v, want a RenderError saying %q", tc.content, tc.input, err, tc.want)
		}
	}
}

// Text that is not valid UTF-8 is never sent: the input is valid UTF-8
// (ParseJSON refuses any other), so a message that renders other text is
// refused as the prompt's fault.
func TestRenderRefusesTextThatIsNotUTF8(t *testing.T) {
	_, err := renderOne(t, `{{ "\xff" }} {{ .q }}`, `{"q":"hi"}`)
	var re *prompt.RenderError
	if !errors.As(err, &re) || re.Field != "messages[0].content" || !strings.Contains(err.Error(), "not valid UTF-8 from an input that is: a fault of the prompt's template") {
		t.Fatalf("Render = %v, want a RenderError naming the message and the prompt's fault", err)
	}
}
