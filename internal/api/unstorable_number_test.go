package api_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// chatWithSchema is a chat request whose response_format schema's maximum is
// the number max.
func chatWithSchema(max string) string {
	return `{"model":"default","messages":[{"role":"user","content":"a number, please"}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"number","maximum":` + max + `}}}}`
}

// numberedTriage is a replica whose triage prompt takes a number, "amount".
func numberedTriage(t *testing.T, b *bundle) string {
	t.Helper()
	return deployed(t, b, func(dir string) {
		edit(t, filepath.Join(dir, "input.schema.json"), `"customer_tier": {`, `"amount": {"type": "number"}, "customer_tier": {`)
	}).URL
}

func amountBody(amount string) string {
	return `{"prompt":"triage","input":{"subject":"s","body":"b","amount":` + amount + `}}`
}

// A number PostgreSQL's numeric cannot hold (1e400000) in a chat request is
// the caller's to fix: 400 invalid_request_error naming the member, not a 500
// that says to resend with the same key (every resend failed the same way).
// Nothing is stored, and the corrected request under the key runs.
func TestChatNumberOutOfRangeIs400NamingTheMember(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: "42"} }})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, chatWithSchema("1e400000"), "Idempotency-Key", "k-huge")
	typ, code, param, msg := openAIErr(r)
	if r.status != http.StatusBadRequest || typ != "invalid_request_error" || code != "number_out_of_range" ||
		param != "response_format.json_schema.schema.maximum" || !strings.Contains(msg, "1e400000") || !strings.Contains(msg, "131072") {
		t.Fatalf("status %d %s: want 400 invalid_request_error number_out_of_range naming the member, the number and the limit", r.status, r.raw)
	}
	assertNothingStored(t, b)
	if r := b.do(t, http.MethodPost, chatPath, acmeKey, chatWithSchema("100"), "Idempotency-Key", "k-huge"); r.status != http.StatusOK {
		t.Fatalf("the corrected request under the same key: status %d %s", r.status, r.raw)
	}
}

// The same for a job's input: 400 number-out-of-range naming input.amount.
func TestJobNumberOutOfRangeIs400NamingTheMember(t *testing.T) {
	b := setup(t, options{})
	url := numberedTriage(t, b)
	for _, amount := range []string{"1e400000", "-1.5e-16383", "0." + strings.Repeat("0", 16383) + "1"} {
		r, err := send(url+"/v1/jobs", http.MethodPost, acmeKey, amountBody(amount), "Idempotency-Key", "k-huge")
		if err != nil {
			t.Fatal(err)
		}
		detail, _ := r.body["detail"].(string)
		if ty, _ := r.body["type"].(string); r.status != http.StatusBadRequest || !strings.HasSuffix(ty, "number-out-of-range") ||
			!strings.Contains(detail, "input.amount") || !strings.Contains(detail, amount[:8]) {
			t.Fatalf("amount %.20s…: status %d %s, want 400 number-out-of-range naming input.amount", amount, r.status, r.raw)
		}
	}
	assertNothingStored(t, b)
	r, err := send(url+"/v1/jobs", http.MethodPost, acmeKey, amountBody("1e400"), "Idempotency-Key", "k-huge")
	if err != nil {
		t.Fatal(err)
	}
	if r.status != http.StatusAccepted && r.status != http.StatusCreated {
		t.Fatalf("the corrected request under the same key: status %d %s", r.status, r.raw)
	}
}

// When PostgreSQL itself refuses a new job's data (here a number the check
// before the database would have caught: SkipNumberCheck), the answer is a
// 400 saying what it refused, on both endpoints, and the refused claim left
// the key free for the corrected request.
func TestDatabaseRefusingTheDataIs400(t *testing.T) {
	api.SkipNumberCheck(t)
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: "42"} }})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, chatWithSchema("1e400000"), "Idempotency-Key", "k-db")
	if typ, code, _, msg := openAIErr(r); r.status != http.StatusBadRequest || typ != "invalid_request_error" || code != "unstorable_request" ||
		!strings.Contains(msg, "value overflows numeric format") {
		t.Fatalf("chat: status %d %s, want 400 invalid_request_error unstorable_request with PostgreSQL's reason", r.status, r.raw)
	}
	url := numberedTriage(t, b)
	r, err := send(url+"/v1/jobs", http.MethodPost, acmeKey, amountBody("1e400000"), "Idempotency-Key", "k-db")
	if err != nil {
		t.Fatal(err)
	}
	if ty, _ := r.body["type"].(string); r.status != http.StatusBadRequest || !strings.HasSuffix(ty, "unstorable-request") {
		t.Fatalf("jobs: status %d %s, want 400 unstorable-request", r.status, r.raw)
	}
	assertNothingStored(t, b)
	if r := b.do(t, http.MethodPost, chatPath, acmeKey, chatWithSchema("100"), "Idempotency-Key", "k-db"); r.status != http.StatusOK {
		t.Fatalf("chat: the corrected request under the same key: status %d %s", r.status, r.raw)
	}
}

func assertNothingStored(t *testing.T, b *bundle) {
	t.Helper()
	for _, table := range []string{"jobs", "idempotency_keys", "attempts"} {
		if n := b.count(t, `SELECT count(*) FROM `+table); n != 0 {
			t.Fatalf("%d rows left in %s by a refused request", n, table)
		}
	}
}
