package prompt_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// A format's own "%%!" ("Growth %v%%!") turned printf's check off for every
// verb of that format: a real mismatch beside it reached the model as fmt's
// note. It is refused, naming the verb, as in any other format; and a "%!"
// the caller's text holds still renders as it is.
func TestPrintfFormatSayingPercentBangIsStillChecked(t *testing.T) {
	for _, c := range []struct{ name, content, input, want string }{
		{"verb that does not fit", `Answer in JSON. {{ printf "Growth %v%%! in %d" .g .region }}`, `{"g":12,"region":"EU"}`, `%d cannot format the string EU`},
		{"verb with no argument", `Answer in JSON. {{ printf "Growth %v%%! in %s" .g }}`, `{"g":12}`, `%s has no argument`},
		{"argument with no verb", `Answer in JSON. {{ printf "Growth %v%%!" .g .region }}`, `{"g":12,"region":"EU"}`, `more arguments than the format has verbs (fmt wrote "%!(EXTRA string=EU)")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			msgs, err := renderPrintf(t, c.content, c.input)
			if err == nil {
				t.Fatalf("input %s rendered %q: want fmt's note refused", c.input, msgs)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("refused with %q, want it to say %q", err, c.want)
			}
		})
	}
	msgs, err := renderPrintf(t, `Answer in JSON. {{ printf "%v%%! %s" .g .note }}`, `{"g":12,"note":"50%!d(x) off!"}`)
	if err != nil || msgs != "Answer in JSON. 12%! 50%!d(x) off!" {
		t.Fatalf("rendered %q, %v; want the caller's and the format's own text as they are", msgs, err)
	}
}

func renderPrintf(t *testing.T, content, input string) (string, error) {
	t.Helper()
	manifest := "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\nmessages:\n  - role: user\n    content: '" + content + "'\n"
	set, _, err := loadOne(t, manifest, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	msgs, err := p.Render(json.RawMessage(input))
	if err != nil {
		return "", err
	}
	return msgs[0].Content, nil
}
