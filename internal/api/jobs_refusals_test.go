package api_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

func longTriage(body string) string {
	return `{"prompt":"triage","input":{"subject":"Long","body":"` + body + `"}}`
}

// A job too long for every target of its route (its rendered prompt plus
// max_tokens exceeds every context window) is the caller's to shorten: 422
// input-too-long naming the token counts and the window, not a 503 telling
// it to send the same request again later. Nothing is stored, so the key
// takes the shortened input. Found by review.
func TestJobTooLongForEveryTargetIs422(t *testing.T) {
	b := setup(t, options{window: 1000})
	r := b.create(t, acmeKey, "too-long-1", longTriage(strings.Repeat("word ", 3000)))
	typ, _ := r.body["type"].(string)
	detail, _ := r.body["detail"].(string)
	if r.status != http.StatusUnprocessableEntity || !strings.HasSuffix(typ, "input-too-long") ||
		!strings.Contains(detail, "the prompt needs ") || !strings.Contains(detail, "plus max_tokens 300") ||
		!strings.Contains(detail, "the window holds 1000") || !strings.Contains(detail, "shorten the input") ||
		r.header.Get("Retry-After") != "" {
		t.Fatalf("%d Retry-After %q %s, want 422 input-too-long naming the counts and the window", r.status, r.header.Get("Retry-After"), r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored, want none", n)
	}
	if short := b.create(t, acmeKey, "too-long-1", longTriage("word word word")); short.status != http.StatusAccepted {
		t.Fatalf("the key with the shortened input: %d %s, want 202", short.status, short.raw)
	}

	// The prompt's own max_tokens filling every window is no input's fault.
	b = setup(t, options{window: 200})
	r = b.create(t, acmeKey, "too-long-2", longTriage("word"))
	typ, _ = r.body["type"].(string)
	detail, _ = r.body["detail"].(string)
	if r.status != http.StatusUnprocessableEntity || !strings.HasSuffix(typ, "max-tokens-fill-window") ||
		!strings.Contains(detail, "max_tokens 300 alone fills the window of 200 tokens") || !strings.Contains(detail, "operator") {
		t.Fatalf("%d %s, want 422 max-tokens-fill-window sending the caller to the operator", r.status, r.raw)
	}
}

// POST /v1/jobs's 503 no-eligible-provider says when to come back, as the
// chat endpoint's does: Retry-After, the seconds until the route's first open
// breaker probes again. Found by review.
func TestJobsNoEligibleProviderHasRetryAfter(t *testing.T) {
	set := openPrimaryBreaker(t, 45*time.Second)
	b := setup(t, options{admission: set})
	r := b.create(t, acmeKey, "no-eligible-1", triageBody("hi"))
	if typ, _ := r.body["type"].(string); r.status != http.StatusServiceUnavailable || !strings.HasSuffix(typ, "no-eligible-provider") {
		t.Fatalf("%d %s, want 503 no-eligible-provider", r.status, r.raw)
	}
	if n, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || n < 1 || n > 45 {
		t.Fatalf("Retry-After %q, want seconds in [1, 45]", r.header.Get("Retry-After"))
	}
}

// GET /v1/jobs with created_after later than created_before is refused,
// naming both bounds, rather than answered with an empty page. Found by
// review.
func TestListRefusesInvertedBounds(t *testing.T) {
	b := setup(t, options{})
	r := b.do(t, http.MethodGet, "/v1/jobs?created_after=2026-02-01T00:00:00Z&created_before=2026-01-01T00:00:00Z", acmeKey, "")
	detail, _ := r.body["detail"].(string)
	if r.status != http.StatusBadRequest || !strings.Contains(detail, "created_after (2026-02-01T00:00:00Z)") ||
		!strings.Contains(detail, "created_before (2026-01-01T00:00:00Z)") {
		t.Fatalf("%d %s, want 400 naming both bounds", r.status, r.raw)
	}
	if r := b.do(t, http.MethodGet, "/v1/jobs?created_after=2026-01-01T00:00:00Z&created_before=2026-02-01T00:00:00Z", acmeKey, ""); r.status != http.StatusOK {
		t.Fatalf("bounds in order: %d %s", r.status, r.raw)
	}
}

// A job not found may have been deleted by retention: the 404 says how long
// jobs are kept. Found by review.
func TestJobNotFoundNamesRetention(t *testing.T) {
	b := setup(t, options{})
	r := b.do(t, http.MethodGet, "/v1/jobs/01a23b58-0d95-714d-b84d-99dabf56969c", acmeKey, "")
	if detail, _ := r.body["detail"].(string); r.status != http.StatusNotFound || !strings.Contains(detail, "retention.jobs") ||
		!strings.Contains(detail, "idempotency.retention") {
		t.Fatalf("%d %s, want 404 naming the retention settings", r.status, r.raw)
	}
}

// Whether a job was created before this replica started (promptUnavailable:
// 422 prompt-retired once a rolling update is over, else 503) is decided on
// one clock: the job's creation is the database's, and this process's clock
// may be off by more than a rolling update lasts. Here it is an hour behind:
// a job created half an hour ago, before this replica started twenty
// minutes ago, read as created since. Found by review.
func TestRolloutWindowOnTheDatabaseClock(t *testing.T) {
	b := setup(t, options{
		timeout:  50 * time.Millisecond,
		respond:  func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} },
		fallback: func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} },
	})
	id := b.create(t, acmeKey, "clock-1", triageBody("hang"), "Prefer", "wait=30").job()
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET prompt_version = 'v-next', created_at = now() - interval '30 minutes' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	behind := time.Now().Add(-time.Hour)
	api.SetClock(b.api, func() time.Time { return time.Now().Add(-time.Hour) })
	api.SetStarted(b.api, behind.Add(-20*time.Minute))
	resolve := func() reply {
		return b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"succeeded","result":`+validTriage+`}`)
	}
	if r := resolve(); r.status != http.StatusUnprocessableEntity || !strings.HasSuffix(r.body["type"].(string), "prompt-retired") {
		t.Fatalf("a job from before this replica started, on a clock an hour behind: %d %s, want 422 prompt-retired", r.status, r.raw)
	}
	// Created ten minutes ago, since this replica started: another replica
	// of the current deployment may validate it.
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET created_at = now() - interval '10 minutes' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if r := resolve(); r.status != http.StatusServiceUnavailable {
		t.Fatalf("a job created since this replica started: %d %s, want 503", r.status, r.raw)
	}
}

// A job id in another form than the router's (uppercase, no hyphens, not a
// UUID) names no job; the 404 says why and what form ids take, instead of
// suggesting that retention deleted it. Found in review.
func TestJobIDInAnotherFormSaysSo(t *testing.T) {
	b := setup(t, options{})
	for _, id := range []string{"01A23B58-0D95-714D-B84D-99DABF56969C", "01a23b580d95714db84d99dabf56969c", "NOTAUUID"} {
		r := b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")
		detail, _ := r.body["detail"].(string)
		if r.status != http.StatusNotFound || !strings.Contains(detail, "is not a job id") || strings.Contains(detail, "retention") {
			t.Errorf("GET /v1/jobs/%s: %d %q; want 404 saying it is not a job id and what ids look like", id, r.status, detail)
		}
	}
}
