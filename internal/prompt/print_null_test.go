package prompt_test

import (
	"strings"
	"testing"
)

// An optional key the input lacks is null; printed directly it is refused
// ("<no value>"), but printed through printf, print or println it reached the
// model as "<nil>" or "%!s(<nil>)". Found by review.
func TestOptionalNullPrintedThroughPrintf(t *testing.T) {
	for _, c := range []string{`{{ printf "%s" .t }}`, `{{ print .t }}`, `{{ .t | printf "%v" }}`, `{{ println "x" .t }}`, `{{ print .obj.t }}`} {
		set, _, err := loadOne(t, "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\ninput_schema: in.json\nmessages:\n  - role: user\n    content: 'Tier: "+c+"'\n",
			map[string]string{"out.json": outSchema, "in.json": `{"type":"object","properties":{"t":{"type":"string"},"obj":{"type":"object"}}}`})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := set.Get("p", "")
		msgs, err := p.Render([]byte(`{"obj":{"t":null}}`))
		if err == nil {
			t.Errorf("%s: rendered %q", c, msgs[0].Content)
			continue
		}
		if !strings.Contains(err.Error(), "null or absent here: t") && !strings.Contains(err.Error(), "null or absent here: a nested value") {
			t.Errorf("%s: error %q does not name what is null", c, err)
		}
	}
}

// Values that are not null print as before, and a null the template guards
// is not printed.
func TestPrintfPrintAndPrintlnOfValues(t *testing.T) {
	set, _, err := loadOne(t, "name: p\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\ninput_schema: in.json\nmessages:\n  - role: user\n    content: '{{ printf \"%s=%v\" .s .n }} {{ print .s .n }} {{ println .b }}{{ print (default \"std\" .t) }}'\n",
		map[string]string{"out.json": outSchema, "in.json": `{"type":"object","properties":{"s":{"type":"string"},"n":{"type":"number"},"b":{"type":"boolean"},"t":{"type":"string"}}}`})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	msgs, err := p.Render([]byte(`{"s":"a","n":12.50,"b":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "a=12.50 a12.50 true\nstd"; msgs[0].Content != want {
		t.Fatalf("rendered %q, want %q", msgs[0].Content, want)
	}
}
