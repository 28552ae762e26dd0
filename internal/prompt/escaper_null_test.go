package prompt_test

import (
	"strings"
	"testing"
)

// html, js and urlquery printed an absent optional key or a null before
// escaping it: "&lt;no value&gt;", "\u003Cno value\u003E", "%3Cno+value%3E"
// and "[vip &lt;nil&gt;]" reached the model, past the check for "<no value>".
// They refuse a null as print does. Found by review.
func TestEscapersRefuseNull(t *testing.T) {
	in := `{"type":"object","properties":{"q":{"type":"string"},"tier":{"type":"string"},"note":{"type":["string","null"]},"tags":{"type":"array"}},"required":["q","note"]}`
	for _, c := range []struct{ content, input, want string }{
		{`{{ html .tier }}`, `{"q":"x","note":"n"}`, "null or absent here: tags, tier"},
		{`{{ .tier | html }}`, `{"q":"x","note":"n"}`, "null or absent here: tags, tier"},
		{`{{ js .tier }}`, `{"q":"x","note":"n"}`, "null or absent here: tags, tier"},
		{`{{ urlquery .tier }}`, `{"q":"x","note":"n"}`, "null or absent here: tags, tier"},
		{`{{ html .note }}`, `{"q":"x","note":null,"tier":"t"}`, "null or absent here: note"},
		{`{{ html .tags }}`, `{"q":"x","note":"n","tier":"t","tags":["vip",null]}`, "tags[1]"},
	} {
		set, _, err := loadOne(t, "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\ninput_schema: in.json\nmessages:\n  - role: user\n    content: 'Answer in JSON: "+c.content+"'\n",
			map[string]string{"out.json": outSchema, "in.json": in})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := set.Get("p", "")
		msgs, err := p.Render([]byte(c.input))
		if err == nil {
			t.Errorf("%s over %s rendered %q", c.content, c.input, msgs[0].Content)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s over %s: error %q lacks %q", c.content, c.input, err, c.want)
		}
	}
}

// Values that are not null are escaped as by the built-ins.
func TestEscapersOfValues(t *testing.T) {
	set, _, err := loadOne(t, "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\nmessages:\n  - role: user\n    content: 'Answer in JSON: {{ html .q }} {{ js .q }} {{ urlquery .q }} {{ .q | html }} {{ html .q .n }}'\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	msgs, err := p.Render([]byte(`{"q":"<a b>","n":12.50}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `Answer in JSON: &lt;a b&gt; \u003Ca b\u003E %3Ca+b%3E &lt;a b&gt; &lt;a b&gt;12.50`; msgs[0].Content != want {
		t.Fatalf("rendered %q, want %q", msgs[0].Content, want)
	}
}
