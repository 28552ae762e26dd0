package api_test

import (
	"strings"
	"testing"
)

// A keyless chat call that its SDK marks as its own retry
// (X-Stainless-Retry-Count ≥ 1) runs as a new job, a second provider call
// for one intent: the router says so in a warning naming the fix. A first
// try (count 0), a call with a key, and a call with no such header are not
// warned of.
func TestKeylessSDKRetryIsWarnedOf(t *testing.T) {
	logs := &lockedBuffer{}
	b := setup(t, options{logs: logs})
	body := `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	for _, hdr := range [][]string{
		{"X-Stainless-Retry-Count", "0"},
		{"Idempotency-Key", "keyed-retry", "X-Stainless-Retry-Count", "2"},
		{},
		{"X-Stainless-Retry-Count", "1"},
	} {
		if rep := b.do(t, "POST", "/v1/chat/completions", acmeKey, body, hdr...); rep.status != 200 {
			t.Fatalf("%v: status %d: %s", hdr, rep.status, rep.raw)
		}
	}
	var warned []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "is its SDK's retry") {
			warned = append(warned, l)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "level=WARN") || !strings.Contains(warned[0], "sdk_retry=1") ||
		!strings.Contains(warned[0], "Idempotency-Key") {
		t.Fatalf("want one warning, for the keyless retry (count 1), naming the fix; got:\n%s", strings.Join(warned, "\n"))
	}
}
