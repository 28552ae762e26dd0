package prompt_test

import (
	"encoding/json"
	"strings"
	"testing"
)

func renderPlain(t *testing.T, content, input string) (string, error) {
	t.Helper()
	set, _, err := loadOne(t, "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\nmessages:\n  - role: user\n    content: 'Answer in JSON: "+content+"'\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	msgs, err := p.Render(json.RawMessage(input))
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(msgs[0].Content, "Answer in JSON: "), nil
}

// {{ printf "%d" .arr }} over [1,2] was refused with "%d cannot format the
// number 1 ... a number sent as a string is text: make it a number in the
// input schema": wrong advice, the numbers inside an array reached fmt as
// text. They are formatted as a top-level number is: [1 2], as fmt prints a
// slice of ints. Found by review.
func TestPrintfFormatsNumbersInsideArraysAndObjects(t *testing.T) {
	in := `{"arr":[1,2],"fl":[1,2.5],"nest":[[3],[4,5]],"obj":{"b":2,"a":1},"mixed":["x",1],"big":[12.0]}`
	for _, c := range []struct{ content, want string }{
		{`{{ printf "%d" .arr }}`, `[1 2]`},
		{`{{ printf "%03d|%x" .arr .arr }}`, `[001 002]|[1 2]`},
		{`{{ printf "%.1f" .fl }}`, `[1.0 2.5]`},
		{`{{ printf "%d" .nest }}`, `[[3] [4 5]]`},
		{`{{ printf "%d" .big }}`, `[12]`},
		{`{{ printf "%v %s" .mixed .fl }}`, `[x 1] [1 2.5]`},
		{`{{ printf "%v" .obj }}`, `map[a:1 b:2]`},
		{`{{ printf "%v" .arr }} {{ .arr }} {{ json .fl }}`, `[1 2] [1 2] [1,2.5]`},
	} {
		got, err := renderPlain(t, c.content, in)
		if err != nil || got != c.want {
			t.Errorf("%s = %q, %v; want %q", c.content, got, err, c.want)
		}
	}
	for _, c := range []struct{ content, want string }{
		{`{{ printf "%d" .fl }}`, `%d needs a whole number within 64 bits, got 2.5`},
		{`{{ printf "%d" .obj }}`, `argument 1 is an object, which fmt formats element by element (an object's keys too), and %d cannot format its key or value the string a`},
		{`{{ printf "%s %d" "x" .mixed }}`, `argument 2 is an array, which fmt formats element by element (an object's keys too), and %d cannot format its element the string x`},
	} {
		got, err := renderPlain(t, c.content, in)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "sent as a string") {
			t.Errorf("%s = %q, %v; want an error with %q and no advice for a number sent as a string", c.content, got, err, c.want)
		}
	}
}

// A verb for no number (%t) of an input number said "%t cannot format the
// string 1 ... a number sent as a string is text": it names the number now.
func TestPrintfVerbForNoNumberNamesTheNumber(t *testing.T) {
	for _, c := range []string{`{{ printf "%t" .n }}`, `{{ printf "%t" .arr }}`} {
		got, err := renderPlain(t, c, `{"n":1,"arr":[1]}`)
		if err == nil || !strings.Contains(err.Error(), `%t cannot format the number 1; use %v`) || strings.Contains(err.Error(), "sent as a string") {
			t.Errorf("%s = %q, %v; want %%t cannot format the number 1", c, got, err)
		}
	}
}
