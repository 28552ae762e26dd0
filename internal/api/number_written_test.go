package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/jsontext"
	"github.com/routerhq/router/internal/providers"
)

// chatWithNote is a chat request whose response_format schema holds the
// numbers nums in an "x-note" array (an annotation: any value passes).
func chatWithNote(nums string) string {
	return `{"model":"default","messages":[{"role":"user","content":"answer {\"ok\":true}"}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object","x-note":[` + nums + `]}}}}`
}

func repeatNumber(num string, n int) string {
	return strings.TrimSuffix(strings.Repeat(num+",", n), ",")
}

// 1e131000 fits PostgreSQL's numeric, but jsonb writes it out in full (a 1
// and 131000 zeros) on every read: 800 of them, a 7 KB request, read back as
// 105 MB, and 9,000 made the win's compare-and-swap fail (out of memory,
// SQLSTATE 54000) and GET /v1/jobs/{id} answer 500. Such a request is the
// caller's to fix: 400 number_out_of_range naming the first such number and
// saying to send it as a string; nothing stored, and the corrected request
// under the same key runs.
func TestChatNumberWrittenOutTooLongIs400(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: `{"ok":true}`} }})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, chatWithNote(repeatNumber("1e131000", 800)), "Idempotency-Key", "k-long")
	typ, code, param, msg := openAIErr(r)
	if r.status != http.StatusBadRequest || typ != "invalid_request_error" || code != "number_out_of_range" ||
		param != "response_format.json_schema.schema.x-note[0]" || !strings.Contains(msg, "1e131000") ||
		!strings.Contains(msg, "131001 characters") || !strings.Contains(msg, "as a string") {
		t.Fatalf("status %d %.600s: want 400 invalid_request_error number_out_of_range naming the member, how long it is written out and the fix", r.status, r.raw)
	}
	assertNothingStored(t, b)
	if r := b.do(t, http.MethodPost, chatPath, acmeKey, chatWithNote(`"1e131000"`), "Idempotency-Key", "k-long"); r.status != http.StatusOK {
		t.Fatalf("the corrected request (the number as a string) under the same key: status %d %s", r.status, r.raw)
	}
}

// Numbers that each pass but together would read back more than
// jsontext.MaxTextGrowth (1 MiB) longer than sent are refused the same way,
// naming the number that crosses the bound: 1e999 grows by 995 characters,
// so the 1054th.
func TestChatNumbersWrittenOutTooLongTogetherAre400(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: `{"ok":true}`} }})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, chatWithNote(repeatNumber("1e999", 1054)), "Idempotency-Key", "k-many")
	if _, code, param, msg := openAIErr(r); r.status != http.StatusBadRequest || code != "number_out_of_range" ||
		param != "response_format.json_schema.schema.x-note[1053]" || !strings.Contains(msg, "1048576") {
		t.Fatalf("status %d %.600s: want 400 number_out_of_range naming x-note[1053] and the bound", r.status, r.raw)
	}
	assertNothingStored(t, b)
	if r := b.do(t, http.MethodPost, chatPath, acmeKey, chatWithNote(repeatNumber("1e999", 1053)), "Idempotency-Key", "k-many"); r.status != http.StatusOK {
		t.Fatalf("1053 of them under the same key: status %d %.300s", r.status, r.raw)
	}
}

// The same for a job's input: 400 number-out-of-range naming input.amount.
func TestJobNumberWrittenOutTooLongIs400(t *testing.T) {
	b := setup(t, options{})
	url := numberedTriage(t, b)
	r, err := send(url+"/v1/jobs", http.MethodPost, acmeKey, amountBody("1e131000"), "Idempotency-Key", "k-long")
	if err != nil {
		t.Fatal(err)
	}
	detail, _ := r.body["detail"].(string)
	if ty, _ := r.body["type"].(string); r.status != http.StatusBadRequest || !strings.HasSuffix(ty, "number-out-of-range") ||
		!strings.Contains(detail, "input.amount") || !strings.Contains(detail, "written out") || !strings.Contains(detail, "Nothing was stored") {
		t.Fatalf("status %d %s, want 400 number-out-of-range naming input.amount", r.status, r.raw)
	}
	assertNothingStored(t, b)
}

// jsontext's length of a number written out is PostgreSQL's: on both sides
// of jsontext.MaxNumberGrowth, for numbers of every shape (sign, digits
// after the point, zero, exponents up and down), CheckNumbers passes a
// number exactly when PostgreSQL writes it out in at most MaxNumberGrowth
// characters more than it was sent in.
func TestNumberWrittenLengthAgreesWithPostgreSQL(t *testing.T) {
	b := setup(t, options{})
	var nums []string
	for _, m := range []string{"0", "-0", "1", "-9", "10", "-123", "0.5", "0.000", "-1.25", "0.0012", "99.900", "1" + strings.Repeat("0", 3000)} {
		for exp := 990; exp <= 1015; exp++ {
			nums = append(nums, fmt.Sprintf("%se%d", m, exp), fmt.Sprintf("%sE-%d", m, exp), fmt.Sprintf("%se+%d", m, exp))
		}
	}
	var lengths []int
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT array_agg(length(n::jsonb::text) ORDER BY o) FROM unnest($1::text[]) WITH ORDINALITY AS u(n, o)`,
		nums).Scan(&lengths); err != nil {
		t.Fatal(err)
	}
	passed := 0
	for i, n := range nums {
		fits := lengths[i]-len(n) <= jsontext.MaxNumberGrowth
		if e := jsontext.CheckNumbers([]byte(n)); (e == nil) != fits {
			t.Errorf("%.20s… (%d bytes): PostgreSQL writes it out in %d characters; CheckNumbers: %v", n, len(n), lengths[i], e)
		} else if fits {
			passed++
		}
	}
	if passed == 0 || passed == len(nums) {
		t.Fatalf("%d of %d numbers pass: the numbers do not straddle the bound", passed, len(nums))
	}
}
