package prompt_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// {{ .tags }} over ["vip",null] rendered "[vip <nil>]", printf "%v" the same,
// and {{ .customer }} over {"name":null} rendered "map[name:<nil>]": a null
// inside an array or object reached the model as <nil>, where a null printed
// directly is refused. It is refused too, naming where the null is. Found by
// review.
func TestNestedNullIsNotPrintedAsNil(t *testing.T) {
	for _, c := range []struct{ content, input, where string }{
		{`Answer in JSON. Tags: {{ .tags }}`, `{"tags":["vip",null]}`, "tags[1]"},
		{`Answer in JSON. Tags: {{ printf "%v" .tags }}`, `{"tags":["vip",null]}`, "tags[1]"},
		{`Answer in JSON. Tags: {{ print .tags }}`, `{"tags":["vip",null]}`, "tags[1]"},
		{`Answer in JSON. Tags: {{ println .tags }}`, `{"tags":[["vip",null]]}`, "tags[0][1]"},
		{`Answer in JSON. Customer: {{ .customer }}`, `{"customer":{"name":null}}`, "customer.name"},
		{`Answer in JSON. Customer: {{ printf "%s" .customer }}`, `{"customer":{"a":{"b":[null]}}}`, "customer.a.b[0]"},
		{`Answer in JSON. Customer: {{ .customer.a }}`, `{"customer":{"a":[1,{"b":null}]}}`, "customer.a[1].b"},
		{`Answer in JSON. Ticket: {{ . }}`, `{"q":null}`, "q"},
		{`Answer in JSON. Ticket: {{ printf "%v" . }}`, `{"q":"x","tags":[null]}`, "tags[0]"},
	} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'`+c.content+`'`, 1)
		set, _, err := loadOne(t, m, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := set.Get("p", "")
		msgs, err := p.Render(json.RawMessage(c.input))
		if err == nil {
			if strings.Contains(msgs[0].Content, "<nil>") {
				t.Errorf("%s over %s rendered %q: a null reached the prompt as <nil>", c.content, c.input, msgs[0].Content)
			}
			continue
		}
		for _, want := range []string{"an array or object with a null in it", "(null or absent here: " + c.where + ")", "{{ json .key }}"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s over %s: the error lacks %q: %v", c.content, c.input, want, err)
			}
		}
	}
}

// What is not a null inside a printed array or object renders as before: an
// array without nulls, json of one with nulls, an element printed on its own,
// "<nil>" in the message's own text or in the caller's.
func TestNestedNullRefusalLeavesTheRestAlone(t *testing.T) {
	for _, c := range []struct{ content, input, want string }{
		{`Answer in JSON. Tags: {{ .tags }}`, `{"tags":["vip","gold"]}`, "Answer in JSON. Tags: [vip gold]"},
		{`Answer in JSON. Tags: {{ json .tags }}`, `{"tags":["vip",null]}`, `Answer in JSON. Tags: ["vip",null]`},
		{`Answer in JSON. Tag: {{ index .tags 0 }}`, `{"tags":["vip",null]}`, "Answer in JSON. Tag: vip"},
		{`Answer in JSON. Go prints a nil map as <nil>. Tags: {{ .tags }}`, `{"tags":["vip",null]}`, "Answer in JSON. Go prints a nil map as <nil>. Tags: [vip <nil>]"},
		{`Answer in JSON. Note: {{ .note }}`, `{"note":"the page shows <nil>","tags":[null]}`, "Answer in JSON. Note: the page shows <nil>"},
	} {
		m := strings.Replace(manifestWith(""), `"Answer in JSON: {{ .q }}"`, `'`+c.content+`'`, 1)
		set, _, err := loadOne(t, m, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := set.Get("p", "")
		msgs, err := p.Render(json.RawMessage(c.input))
		if err != nil {
			t.Errorf("%s over %s: %v", c.content, c.input, err)
			continue
		}
		if msgs[0].Content != c.want {
			t.Errorf("%s over %s rendered %q, want %q", c.content, c.input, msgs[0].Content, c.want)
		}
	}
}
