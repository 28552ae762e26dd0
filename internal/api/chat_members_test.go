package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A chat body whose member names a case-sensitive reader in front of the
// router (a policy proxy) reads otherwise than encoding/json does is refused
// 400 invalid_json before anything is written, naming the member as param and
// saying how to spell it: a name that differs from a known one only in case
// ("Model", "meſſageſ" with U+017F, a message's "Content"), a key twice in one
// object (the router would run the last, others read the first), and a
// top-level near miss of a parameter ("max_token", which would drop the
// limit unnoticed). No job, key or attempt is left, the provider is not
// called, and the corrected body under the same Idempotency-Key runs.
// Vendors' parameters and other unknown names stay ignored. Found in review.
func TestChatRefusesMemberNamesReadersDisagreeOn(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: "hello"} }})
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	const tools = `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"`
	for _, c := range []struct{ body, param, says string }{
		{`{"model":"default",` + msgs + `,"Model":"default"}`, "Model", `send it as "model"`},
		{`{"model":"default","meſſageſ":[{"role":"user","content":"hi"}]}`, "meſſageſ", `send it as "messages"`},
		{`{"model":"default","messages":[{"role":"user","content":"hi","Content":"bye"}]}`, "messages[0].Content", `send it as "content"`},
		{`{"model":"default",` + msgs + `,"response_format":{"type":"text","Type":"text"}}`, "response_format.Type", `send it as "type"`},
		{`{"model":"default",` + msgs + `,"model":"default"}`, "model", `the member "model" appears twice`},
		{`{"model":"default",` + msgs + `,` + tools + `,"type":"object"}}}]}`, "tools[0].function.parameters.type",
			`the object at /tools/0/function/parameters has the key "type" twice`},
		{`{"model":"default",` + msgs + `,"max_token":5}`, "max_token", `did you mean "max_tokens"?`},
	} {
		r := b.do(t, http.MethodPost, chatPath, acmeKey, c.body, "Idempotency-Key", "members-1")
		typ, code, param, msg := openAIErr(r)
		if r.status != http.StatusBadRequest || typ != "invalid_request_error" || code != "invalid_json" || param != c.param || !strings.Contains(msg, c.says) {
			t.Errorf("%s: status %d body %s, want 400 invalid_json naming %s and saying %q", c.body, r.status, r.raw, c.param, c.says)
		}
	}
	for _, table := range []string{"jobs", "idempotency_keys", "attempts"} {
		if n := b.count(t, `SELECT count(*) FROM `+table); n != 0 {
			t.Fatalf("%d rows left in %s by refused requests", n, table)
		}
	}
	if n := len(b.primary.Requests()); n != 0 {
		t.Fatalf("the provider was called %d times for refused requests", n)
	}
	ok := `{"model":"default",` + msgs + `,"max_tokens":5,` + tools + `}}}],"top_k":40,"min_p":0.1,"store":false,"metadata":{},` +
		`"service_tier":"auto","models":["a"],"vendor_thing":{"Model":1}}`
	if r := b.do(t, http.MethodPost, chatPath, acmeKey, ok, "Idempotency-Key", "members-1"); r.status != http.StatusOK {
		t.Fatalf("the corrected request (with vendors' parameters) under the same key: status %d body %s", r.status, r.raw)
	}
}
