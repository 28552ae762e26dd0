package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/race"
)

// TestHalfOpenReplayWhoseKeyExpiresBeforeItsClaim for the chat endpoint:
// while a target's breaker is half-open, a chat request whose
// Idempotency-Key holds a job is let through unplanned, to replay it without
// taking the probe. Should the key's retention pass between that look-up and
// the claim, the request is a new job: it used to be stored with no plan,
// past the breaker, even while another request held the only probe — where a
// new job is refused 503 and nothing stored. It is now planned as the new job
// it is: refused while the probe is taken, created with the probe when it is
// free. Found by review.
func TestChatHalfOpenReplayWhoseKeyExpiresBeforeItsClaim(t *testing.T) {
	b, set, changes, tr := keyReleasedSetup(t)
	chatBody := func(content string) string {
		return `{"model":"default","messages":[{"role":"user","content":"` + content + `"}]}`
	}
	// The resend whose probe is taken streams: without the fix it is a job,
	// answered 200 at once (its stream's headers) rather than after the
	// plain call's wait, so the test fails at once too.
	bodies := map[string]string{"cho-free": chatBody("Probe free"),
		"cho-taken": `{"model":"default","stream":true,"messages":[{"role":"user","content":"Probe taken"}]}`}
	first := map[string]string{}
	for key, body := range bodies {
		r := b.do(t, "POST", "/v1/chat/completions", acmeKey, body, "Idempotency-Key", key)
		if r.status != http.StatusOK || r.header.Get("X-Router-Job-Id") == "" {
			t.Fatalf("first chat call of %s: %d %s", key, r.status, r.raw)
		}
		first[key] = r.header.Get("X-Router-Job-Id")
	}
	resend := func(key string) reply {
		t.Helper()
		k := key
		tr.key.Store(&k)
		r := b.chatHead(t, bodies[key], key)
		if !tr.fired.Load() {
			t.Fatalf("%s: the key's retention was not ended between its look-up and its claim", key)
		}
		tr.fired.Store(false)
		return r
	}

	// The probe free: the request, a new job, takes it and runs.
	halfOpenPrimary(t, set, changes)
	r := resend("cho-free")
	if id := r.header.Get("X-Router-Job-Id"); r.status != http.StatusOK || id == "" || id == first["cho-free"] ||
		r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("resend whose key expired after its look-up, the probe free: %d (job %q, first %q) %s; want 200, a new job that succeeded",
			r.status, id, first["cho-free"], r.raw)
	}
	closedAgain(t, changes, "the new job's success did not close the breaker: it did not run as its probe")

	// The probe taken by another request: the new job is refused, nothing stored.
	halfOpenPrimary(t, set, changes)
	releaseProbe, ok, why := set.Admit("primary")
	if !ok {
		t.Fatalf("the half-open breaker refused its probe: %s", why)
	}
	t.Cleanup(func() { releaseProbe(race.OutcomeFailure) })
	r = resend("cho-taken")
	if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.raw), "no_eligible_provider") {
		t.Fatalf("resend whose key expired after its look-up, the probe taken: %d %s; want the 503 no_eligible_provider", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE idempotency_key = 'cho-taken'`); n != 1 {
		t.Fatalf("%d jobs for the key; want 1, nothing stored by the refusal", n)
	}
}

// chatHead sends a chat request with an Idempotency-Key and reads its body
// only when its answer is not a stream (status other than 200), so a stream
// that would run on does not hold the test.
func (b *bundle) chatHead(t *testing.T, body, key string) reply {
	t.Helper()
	req, err := http.NewRequest("POST", b.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+acmeKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.raw, _ = io.ReadAll(resp.Body)
	}
	return r
}
