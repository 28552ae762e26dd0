package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A user that is an e-mail address was sent as metadata.user_id, which
// Anthropic refuses ("metadata.user_id: user_id appears to contain an email
// address. Please send a uuid or hash value instead."): bad_request, the job
// stopped — and the tenant's end user's e-mail left for Anthropic. An e-mail
// address or a phone number is sent as the stable hash a too long user is
// sent as; an opaque id is sent as it is. Found by review (ranth3 #2).
func TestAnthropicEmailUserIsHashed(t *testing.T) {
	fake := &anthStrict{}
	srv := newFakeServer(t, fake.ServeHTTP)
	p := newAnthropicAdapter(t, srv.URL, nil)
	send := func(user string) string {
		t.Helper()
		req := &Request{Messages: []Message{{Role: "user", Content: "hi"}}, MaxTokens: 50, User: user}
		if _, err := p.Complete(context.Background(), req); err != nil {
			e, _ := AsError(err)
			t.Fatalf("user %q: kind %s action %s: %v", user, e.Kind, e.Action, err)
		}
		return fake.user()
	}
	hashed := func(got string) bool { return strings.HasPrefix(got, "sha256-") && len(got) == len("sha256-")+64 }
	for _, user := range []string{
		"alice@example.com", "Alice.Smith+router@Example.CO.UK", "tenant-7:bob@example.org", " carol@example.com ",
		"+33 6 12 34 56 78", "+14155552671", "(415) 555-2671", "415-555-2671", "4155552671", "020 7946 0958",
	} {
		got := send(user)
		if !hashed(got) || strings.Contains(got, "@") {
			t.Errorf("user %q sent as %q: want the sha256- hash of it", user, got)
		}
		if again := send(user); again != got {
			t.Errorf("user %q sent as %q, then %q: want the same hash", user, got, again)
		}
	}
	if a, b := send("alice@example.com"), send("bob@example.com"); a == b {
		t.Errorf("two users sent as the same id %q", a)
	}
	for _, user := range []string{
		"550e8400-e29b-41d4-a716-446655440000", "user_123", "u-1", "1234567", "42",
		"sha256-" + strings.Repeat("ab", 32), "5f4dcc3b5aa765d61d8327deb882cf99", "alice", "@alice",
	} {
		if got := send(user); got != user {
			t.Errorf("opaque user %q sent as %q: want it as it is", user, got)
		}
	}
}

// Second line of defence: whatever else Anthropic refuses in
// metadata.user_id (a form the adapter does not spot), it is a value only
// this target refuses — OpenAI-compatible targets take any user — so the
// error fails over, still the request's bad_request (the target's breaker
// does not count it), rather than stopping the job.
func TestAnthropicUserIDRefusalFailsOver(t *testing.T) {
	for _, msg := range []string{
		"metadata.user_id: user_id appears to contain an email address. Please send a uuid or hash value instead.",
		"metadata.user_id: user_id appears to contain a phone number. Please send a uuid or hash value instead.",
		"metadata.user_id: String should have at most 256 characters",
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthReal400(w, msg) })
		p := newAnthropicAdapter(t, srv.URL, nil)
		req := testRequest()
		req.User = "u-1"
		_, err := p.Complete(context.Background(), req)
		pe, ok := AsError(err)
		if !ok || pe.Kind != KindBadRequest || pe.Fault != FaultCaller || pe.Action != ActionFailover {
			t.Errorf("%q: got %v, want a bad_request (the caller's) failed over", msg, err)
		}
	}
}
