package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A response_format.json_schema whose $defs each apply the next twice (40
// levels, 2.6 KB) would make validating any answer take 2^40 steps: the
// request is refused, 400 naming response_format.json_schema and saying how
// to fix the schema, before anything is stored or any provider called; the
// corrected request under the same key runs. (14 levels, 2^14 steps, are
// enough to be refused, and without the check the answer is validated in
// milliseconds and the request succeeds, rather than running for ever.)
func TestChatSchemaTooCostlyToValidateIs400(t *testing.T) {
	var calls atomic.Int32
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		calls.Add(1)
		return providers.Step{Output: `{"ok":true}`}
	}})
	var defs []string
	for i := range 14 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, `"d14":{"type":"object"}`)
	body := func(schema string) string {
		return `{"model":"default","messages":[{"role":"user","content":"answer {\"ok\":true}"}],` +
			`"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":` + schema + `}}}`
	}
	r := b.do(t, http.MethodPost, chatPath, acmeKey, body(`{"$ref":"#/$defs/d0","$defs":{`+strings.Join(defs, ",")+`}}`), "Idempotency-Key", "k-cost")
	typ, _, param, msg := openAIErr(r)
	if r.status != http.StatusBadRequest || typ != "invalid_request_error" || !strings.HasPrefix(param, "response_format.json_schema") ||
		!strings.Contains(msg, "more than 10000 of its subschemas") || !strings.Contains(msg, "fewer nested $ref, allOf, anyOf and oneOf") {
		t.Fatalf("status %d %s: want 400 invalid_request_error naming response_format.json_schema and the fix", r.status, r.raw)
	}
	assertNothingStored(t, b)
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d provider calls for a refused request", n)
	}
	if r := b.do(t, http.MethodPost, chatPath, acmeKey, body(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`), "Idempotency-Key", "k-cost"); r.status != http.StatusOK {
		t.Fatalf("the corrected request under the same key: status %d %s", r.status, r.raw)
	}
}
