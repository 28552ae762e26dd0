package api_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// Acceptance 1: 50 concurrent POSTs with one key and one body.
func TestConcurrentSameKeyMakesOneJob(t *testing.T) {
	b := setup(t, options{})
	const n = 50
	replies := make([]reply, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			replies[i] = b.create(t, acmeKey, "click-1", triageBody("Login broken"), "Prefer", "wait=30")
		})
	}
	close(start)
	wg.Wait()
	id := replies[0].job()
	created := 0
	for _, r := range replies {
		if r.status != http.StatusCreated && r.status != http.StatusOK && r.status != http.StatusAccepted {
			t.Fatalf("status %d: %s", r.status, r.raw)
		}
		if r.job() != id || id == "" {
			t.Fatalf("job ids differ: %q vs %q", r.job(), id)
		}
		if r.header.Get("Idempotent-Replayed") != "true" {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d responses claim to have created the job, want 1", created)
	}
	if c := b.count(t, "SELECT count(*) FROM jobs"); c != 1 {
		t.Fatalf("jobs = %d, want 1", c)
	}
	if c := b.count(t, "SELECT count(*) FROM attempts"); c != 1 {
		t.Fatalf("attempts = %d, want 1", c)
	}
	if c := b.primary.Calls(); c != 1 {
		t.Fatalf("provider calls = %d, want 1", c)
	}
}

// Acceptance 2: same key with another input is a conflict; same JSON reordered replays.
func TestKeyReuseAndCanonicalReplay(t *testing.T) {
	b := setup(t, options{})
	first := b.create(t, acmeKey, "k", `{"prompt":"triage","input":{"subject":"A","body":"B"}}`, "Prefer", "wait=30")
	if first.status != http.StatusCreated {
		t.Fatalf("first: %d %s", first.status, first.raw)
	}
	version := first.body["version"]

	conflict := b.create(t, acmeKey, "k", `{"prompt":"triage","input":{"subject":"A","body":"other"}}`)
	if conflict.status != http.StatusConflict {
		t.Fatalf("reuse: %d %s", conflict.status, conflict.raw)
	}
	if ct := conflict.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type %q", ct)
	}
	if typ, _ := conflict.body["type"].(string); !strings.HasSuffix(typ, "idempotency-key-reused") {
		t.Fatalf("type %q", typ)
	}
	if d, _ := conflict.body["detail"].(string); !strings.Contains(d, `"k"`) {
		t.Fatalf("detail does not name the key: %q", d)
	}
	if _, ok := conflict.body["id"]; ok {
		t.Fatal("a conflict must not return the existing job")
	}
	if c := b.count(t, "SELECT count(*) FROM jobs"); c != 1 {
		t.Fatalf("jobs = %d", c)
	}
	again := b.do(t, "GET", "/v1/jobs/"+first.job(), acmeKey, "")
	if again.body["version"] != version || again.body["state"] != "succeeded" {
		t.Fatalf("first job changed: %s", again.raw)
	}

	reordered := b.create(t, acmeKey, "k", "{ \"input\": {\"body\":\"B\",  \"subject\":\"A\"},\n \"prompt\":\"triage\" }")
	if reordered.status != http.StatusOK || reordered.job() != first.job() || reordered.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("reordered replay: %d %s", reordered.status, reordered.raw)
	}
	if b.primary.Calls() != 1 {
		t.Fatalf("provider calls = %d, want 1", b.primary.Calls())
	}
}

// Acceptance 3: key scope is (owner, operation, key); owners cannot see each other.
func TestKeyScopeAndOwnerIsolation(t *testing.T) {
	b := setup(t, options{})
	a := b.create(t, acmeKey, "shared", triageBody("x"), "Prefer", "wait=30")
	g := b.create(t, globexKey, "shared", triageBody("x"), "Prefer", "wait=30")
	if a.status != http.StatusCreated || g.status != http.StatusCreated || a.job() == g.job() {
		t.Fatalf("two owners: %d %d same=%v", a.status, g.status, a.job() == g.job())
	}
	inv := b.create(t, acmeKey, "shared", `{"prompt":"invoice","input":{"text":"Invoice 7 total 10 EUR"}}`)
	if inv.status >= 300 || inv.job() == a.job() {
		t.Fatalf("other operation: %d %s", inv.status, inv.raw)
	}
	if r := b.do(t, "GET", "/v1/jobs/"+a.job(), globexKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("globex reading acme's job: %d", r.status)
	}
	if r := b.do(t, "GET", "/v1/jobs/00000000-0000-0000-0000-000000000000", globexKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("missing job: %d", r.status)
	}
	if r := b.do(t, "POST", "/v1/jobs/"+a.job()+"/cancel", globexKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("globex cancelling acme's job: %d", r.status)
	}
	if c := b.count(t, "SELECT count(*) FROM jobs"); c != 3 {
		t.Fatalf("jobs = %d, want 3", c)
	}
}

// Acceptance 4: replay while running is 202; after completion 200 with the result.
func TestReplayWhileRunningAndAfter(t *testing.T) {
	release := make(chan struct{})
	called := make(chan struct{}, 1)
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		called <- struct{}{}
		<-release
		return providers.Step{Output: validTriage}
	}})
	first := b.create(t, acmeKey, "slow", triageBody("slow"))
	if first.status != http.StatusAccepted || first.header.Get("Location") != "/v1/jobs/"+first.job() {
		t.Fatalf("first: %d %v %s", first.status, first.header, first.raw)
	}
	<-called
	running := b.create(t, acmeKey, "slow", triageBody("slow"))
	if running.status != http.StatusAccepted || running.header.Get("Idempotent-Replayed") != "true" || running.job() != first.job() {
		t.Fatalf("replay while running: %d %v", running.status, running.header)
	}
	if running.body["state"] != "running" {
		t.Fatalf("state %v", running.body["state"])
	}
	close(release)
	done := b.do(t, "GET", "/v1/jobs/"+first.job(), acmeKey, "", "Prefer", "wait=30")
	if done.body["state"] != "succeeded" {
		t.Fatalf("not succeeded: %s", done.raw)
	}
	after := b.create(t, acmeKey, "slow", triageBody("slow"))
	if after.status != http.StatusOK || after.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay after: %d %v", after.status, after.header)
	}
	res, _ := after.body["result"].(map[string]any)
	if res["category"] != "technical" || after.body["completed_by"] == nil {
		t.Fatalf("result %s", after.raw)
	}
	if b.primary.Calls() != 1 {
		t.Fatalf("provider calls %d", b.primary.Calls())
	}
}

// Acceptance 5: retention on the database clock; running jobs' keys never expire.
func TestKeyRetention(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, options{retention: time.Hour, respond: func(call int, _ *providers.Request) providers.Step {
		if call == 1 {
			<-release
		}
		return providers.Step{Output: validTriage}
	}})
	first := b.create(t, acmeKey, "ret", triageBody("r"))
	// Running (its provider call held): its key has no expiry at all — an
	// expiry, however far, would end while it runs — and says so
	// (key_expires_at null), on its creation, its replay and GET.
	noExpiry := func(what string, r reply) {
		t.Helper()
		if exp, found := r.body["key_expires_at"]; !found || exp != nil || r.body["state"] == "succeeded" {
			t.Fatalf("%s of a running job: key_expires_at %v (present %v); want null: %d %s", what, exp, found, r.status, r.raw)
		}
	}
	noExpiry("creation", first)
	replay := b.create(t, acmeKey, "ret", triageBody("r"))
	if replay.job() != first.job() {
		t.Fatal("a running job's key expired")
	}
	noExpiry("replay", replay)
	noExpiry("GET", b.do(t, "GET", "/v1/jobs/"+first.job(), acmeKey, ""))
	if n := b.count(t, `SELECT count(*) FROM idempotency_keys WHERE expires_at IS NOT NULL`); n != 0 {
		t.Fatalf("%d key rows have an expiry while their job runs; want none", n)
	}
	close(release)
	done := b.do(t, "GET", "/v1/jobs/"+first.job(), acmeKey, "", "Prefer", "wait=30")
	exp, _ := done.body["key_expires_at"].(string)
	if exp == "" {
		t.Fatalf("terminal job has no key_expires_at: %s", done.raw)
	}
	if _, err := b.db.Pool.Exec(t.Context(), `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	fresh := b.create(t, acmeKey, "ret", triageBody("r"), "Prefer", "wait=30")
	if fresh.status != http.StatusCreated || fresh.job() == first.job() {
		t.Fatalf("expired key: %d %s", fresh.status, fresh.raw)
	}
	if old := b.do(t, "GET", "/v1/jobs/"+first.job(), acmeKey, ""); old.status != http.StatusOK {
		t.Fatalf("old job not readable: %d", old.status)
	}
}

// Acceptance 6: rejections store nothing, and a corrected request then succeeds.
func TestRejectionsStoreNothing(t *testing.T) {
	b := setup(t, options{maxBody: 4096})
	good := triageBody("ok")
	cases := []struct {
		name   string
		apiKey string
		key    string
		keys   []string // extra Idempotency-Key headers
		body   string
		status int
	}{
		{"missing key", acmeKey, "", nil, good, 400},
		{"empty key", acmeKey, "", []string{"Idempotency-Key", ""}, good, 400},
		{"over-long key", acmeKey, strings.Repeat("k", 256), nil, good, 400},
		{"non-ASCII key", acmeKey, "caf\u00e9", nil, good, 400},
		{"control character in key", acmeKey, "tab\there", nil, good, 400},
		{"malformed JSON", acmeKey, "fix-me", nil, `{"prompt":"triage","input":{`, 400},
		{"wrong field type", acmeKey, "fix-me", nil, `{"prompt":7,"input":{}}`, 400},
		{"input not an object", acmeKey, "fix-me", nil, `{"prompt":"triage","input":[1]}`, 400},
		{"unknown prompt", acmeKey, "fix-me", nil, `{"prompt":"nope","input":{}}`, 422},
		{"unknown route", acmeKey, "fix-me", nil, `{"prompt":"triage","route":"nope","input":{"subject":"a","body":"b"}}`, 422},
		{"input schema", acmeKey, "fix-me", nil, `{"prompt":"triage","input":{"subject":"a"}}`, 422},
		{"no API key", "", "fix-me", nil, good, 401},
		{"wrong API key", "nope", "fix-me", nil, good, 401},
		{"oversized body", acmeKey, "fix-me", nil, `{"prompt":"triage","input":{"subject":"a","body":"` + strings.Repeat("x", 5000) + `"}}`, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := c.keys
			r := b.create(t, c.apiKey, c.key, c.body, hdr...)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.raw)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("content type %q", ct)
			}
			if d, _ := r.body["detail"].(string); d == "" {
				t.Fatalf("no detail: %s", r.raw)
			}
		})
	}
	if n := b.count(t, "SELECT (SELECT count(*) FROM jobs) + (SELECT count(*) FROM idempotency_keys) + (SELECT count(*) FROM attempts)"); n != 0 {
		t.Fatalf("rejected requests stored %d rows", n)
	}
	if b.primary.Calls() != 0 {
		t.Fatal("a rejected request reached the provider")
	}
	ok := b.create(t, acmeKey, "fix-me", good, "Prefer", "wait=30")
	if ok.status != http.StatusCreated || ok.body["state"] != "succeeded" {
		t.Fatalf("corrected request: %d %s", ok.status, ok.raw)
	}
}

// SPEC §4.4: no eligible provider at all → 503 with routing explaining each
// provider; nothing is stored. (A job too long for every target's context
// window is a 422 instead: TestJobTooLongForEveryTargetIs422.)
func TestNoEligibleProviderIs503(t *testing.T) {
	set := openPrimaryBreaker(t, time.Minute)
	b := setup(t, options{admission: set})
	r := b.create(t, acmeKey, "breaker-open", triageBody("x"))
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	routing, _ := r.body["routing"].([]any)
	if len(routing) != 1 {
		t.Fatalf("routing %s", r.raw)
	}
	d := routing[0].(map[string]any)
	if reason, _ := d["reason"].(string); d["eligible"] != false || !strings.Contains(reason, "circuit breaker open") {
		t.Fatalf("decision %v", d)
	}
	if n := b.count(t, "SELECT (SELECT count(*) FROM jobs) + (SELECT count(*) FROM idempotency_keys)"); n != 0 {
		t.Fatalf("stored %d rows", n)
	}
	if b.primary.Calls() != 0 {
		t.Fatal("provider called")
	}
}

// openPrimaryBreaker is a breaker set whose "primary" has just opened (one
// failure trips it) and stays open for openFor.
func openPrimaryBreaker(t *testing.T, openFor time.Duration) *breaker.Set {
	t.Helper()
	set := breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 1, OpenFor: openFor}}, breaker.Options{})
	t.Cleanup(set.Close)
	release, ok, _ := set.Admit("primary")
	if !ok {
		t.Fatal("a new breaker refused")
	}
	release(race.OutcomeFailure) // opens it
	return set
}
