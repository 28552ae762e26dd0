package prompt_test

import (
	"encoding/json"
	"testing"
)

// fmtError takes "%!" in printf's result for fmt's error note ("%!d(string=x)")
// unless the format or an argument holds "%!" itself. But the two characters
// can come from two places: an argument ending in "%" ("50%", "100%") printed
// just before a "!" of the format, or before an argument starting with "!".
// fmt wrote no error note, the text is what the author meant, and the job is
// refused 422 as if printf had failed ("printf \"Save %s!\": fmt could not
// apply the format ..."), blaming the caller's valid input.
func TestPrintfOfAPercentBeforeAnExclamationMarkRenders(t *testing.T) {
	for _, c := range []struct{ name, content, input, want string }{
		{"format's ! after an argument's %", `Answer in JSON. {{ printf "Save %s!" .discount }}`, `{"discount":"50%"}`, "Answer in JSON. Save 50%!"},
		{"two arguments", `Answer in JSON. {{ printf "%s%s" .a .b }}`, `{"a":"100%","b":"!important"}`, "Answer in JSON. 100%!important"},
		{"number with %v", `Answer in JSON. {{ printf "Growth %v%%!" .g }}`, `{"g":12}`, "Answer in JSON. Growth 12%!"},
	} {
		t.Run(c.name, func(t *testing.T) {
			manifest := "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\nmessages:\n  - role: user\n    content: '" + c.content + "'\n"
			set, _, err := loadOne(t, manifest, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := set.Get("p", "")
			msgs, err := p.Render(json.RawMessage(c.input))
			if err != nil {
				t.Fatalf("input %s refused: %v; fmt wrote no error note, the text is %q", c.input, err, c.want)
			}
			if msgs[0].Content != c.want {
				t.Fatalf("rendered %q, want %q", msgs[0].Content, c.want)
			}
		})
	}
}
