package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// RFC 9110 §15.5.6: a method an endpoint does not take is 405 with Allow
// naming the ones it does (a 404 would say the endpoint does not exist). It
// is answered before authentication, as routing is: the endpoints are public.
// A path that is no endpoint stays 404 for every method. The OpenAI-compatible
// endpoints answer in OpenAI's error shape (docs/chat.md).
func TestWrongMethodIs405WithAllow(t *testing.T) {
	b := setup(t, options{})
	job := b.create(t, acmeKey, "m-1", triageBody("methods"), "Prefer", "wait=30")
	if job.status != http.StatusCreated {
		t.Fatalf("create: %d %s", job.status, job.raw)
	}
	id := job.job()
	for _, c := range []struct{ method, path, allow string }{
		{"DELETE", "/v1/jobs", "GET, HEAD, POST"},
		{"PUT", "/v1/jobs/" + id, "GET, HEAD"},
		{"DELETE", "/v1/jobs/" + id, "GET, HEAD"},
		{"GET", "/v1/jobs/" + id + "/cancel", "POST"},
		{"GET", "/v1/jobs/" + id + "/retry", "POST"},
		{"POST", "/v1/jobs/" + id + "/events", "GET, HEAD"},
		{"GET", "/v1/jobs/" + id + "/attempts/1/resolve", "POST"},
		{"POST", "/healthz", "GET, HEAD"},
	} {
		for _, key := range []string{acmeKey, ""} {
			r := b.do(t, c.method, c.path, key, "")
			typ, _ := r.body["type"].(string)
			detail, _ := r.body["detail"].(string)
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != c.allow ||
				r.header.Get("Content-Type") != "application/problem+json" || !strings.HasSuffix(typ, "/method-not-allowed") ||
				!strings.Contains(detail, c.allow) {
				t.Errorf("%s %s (key %q): %d Allow %q %s; want 405, Allow %q, a problem saying which methods",
					c.method, c.path, key, r.status, r.header.Get("Allow"), r.raw, c.allow)
			}
		}
	}
	for _, c := range []struct{ method, path, allow string }{
		{"GET", "/v1/chat/completions", "POST"},
		{"POST", "/v1/models", "GET, HEAD"},
	} {
		r := b.do(t, c.method, c.path, acmeKey, "")
		e, _ := r.body["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != c.allow || e == nil || e["code"] != "method_not_allowed" ||
			!strings.HasSuffix(msg, "see docs/chat.md") {
			t.Errorf("%s %s: %d Allow %q %s; want 405 in OpenAI's error shape, Allow %q, pointing to docs/chat.md", c.method, c.path, r.status, r.header.Get("Allow"), r.raw, c.allow)
		}
	}
	for _, p := range []string{"/nope", "/v1/nope", "/metrics", "/v1/jobs/" + id + "/nope"} {
		for _, m := range []string{"GET", "POST", "DELETE"} {
			if r := b.do(t, m, p, "", ""); r.status != http.StatusNotFound || r.header.Get("Allow") != "" {
				t.Errorf("%s %s: %d Allow %q, want 404 without Allow", m, p, r.status, r.header.Get("Allow"))
			}
		}
	}
}

// docs/api.md: "The applied wait is echoed in Preference-Applied", and
// Prefer: wait works on GET /v1/jobs/{id} too — as it is echoed on a POST
// replay of a job that is already terminal, it is on a GET of one.
func TestPreferenceAppliedOnGet(t *testing.T) {
	b := setup(t, options{})
	job := b.create(t, acmeKey, "pa-1", triageBody("applied"), "Prefer", "wait=30")
	if job.status != http.StatusCreated || job.header.Get("Preference-Applied") != "wait=30" {
		t.Fatalf("create: %d %v %s", job.status, job.header, job.raw)
	}
	if r := b.create(t, acmeKey, "pa-1", triageBody("applied"), "Prefer", "wait=7"); r.header.Get("Preference-Applied") != "wait=7" {
		t.Fatalf("POST replay: Preference-Applied %q", r.header.Get("Preference-Applied"))
	}
	r := b.do(t, "GET", "/v1/jobs/"+job.job(), acmeKey, "", "Prefer", "wait=7")
	if r.status != http.StatusOK || r.header.Get("Preference-Applied") != "wait=7" {
		t.Fatalf("GET: %d Preference-Applied %q, want wait=7", r.status, r.header.Get("Preference-Applied"))
	}
	if r := b.do(t, "GET", "/v1/jobs/"+job.job(), acmeKey, ""); r.header.Get("Preference-Applied") != "" {
		t.Fatalf("GET without Prefer: Preference-Applied %q", r.header.Get("Preference-Applied"))
	}
}

// docs/api.md: "Every response that names a job carries its id in
// X-Router-Job-Id too" — not only POST /v1/jobs: the job resource wherever it
// is answered, a problem about a job (job_id), and the job's events.
func TestEveryResponseNamingAJobCarriesItsID(t *testing.T) {
	b := setup(t, options{})
	job := b.create(t, acmeKey, "hdr-1", triageBody("header"), "Prefer", "wait=30")
	if job.status != http.StatusCreated {
		t.Fatalf("create: %d %s", job.status, job.raw)
	}
	id := job.job()
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/jobs/" + id, ""},
		{"POST", "/v1/jobs/" + id + "/cancel", ""},                                 // 409 job-finished
		{"POST", "/v1/jobs/" + id + "/retry", ""},                                  // 409 not-retryable
		{"POST", "/v1/jobs/" + id + "/attempts/1/resolve", `{"outcome":"failed"}`}, // 409 not-unknown
		{"POST", "/v1/jobs/" + id + "/attempts/9/resolve", `{"outcome":"failed"}`}, // 404 attempt-not-found
		{"GET", "/v1/jobs/" + id + "/events", ""},
	} {
		r := b.do(t, c.method, c.path, acmeKey, c.body)
		if got := r.header.Get("X-Router-Job-Id"); got != id {
			t.Errorf("%s %s: %d X-Router-Job-Id %q, want %q: %s", c.method, c.path, r.status, got, id, r.raw)
		}
	}
	// A job that does not exist, or is another owner's, is named by nobody.
	if r := b.do(t, "GET", "/v1/jobs/"+id, globexKey, ""); r.status != http.StatusNotFound || r.header.Get("X-Router-Job-Id") != "" {
		t.Errorf("another owner's job: %d X-Router-Job-Id %q", r.status, r.header.Get("X-Router-Job-Id"))
	}
}

// docs/api.md: a problem's detail says "what was wrong and how to fix it". A
// body that does not decode is described in the request's terms (the field,
// the type it takes), not in the router's (Go struct names, a bare "EOF").
func TestMalformedBodyDetailSaysHowToFix(t *testing.T) {
	b := setup(t, options{})
	for _, c := range []struct {
		body string
		want []string
	}{
		{``, []string{"empty", "JSON object"}},
		{`{"prompt":"triage",`, []string{"ends", "before"}},
		{`{"prompt":"triage" "input":{}}`, []string{"not valid JSON", "byte"}},
		{`{"prompt":7,"input":{}}`, []string{`"prompt"`, "a string", "not a number"}},
		{`{"prompt":"triage","route":["a"],"input":{}}`, []string{`"route"`, "a string", "not an array"}},
		{`[1]`, []string{"JSON object", "not an array"}},
		{`"triage"`, []string{"JSON object", "not a string"}},
		{`{"prompt":"triage","inptu":{}}`, []string{`unknown field "inptu"`, "prompt, prompt_version, input, route"}},
	} {
		r := b.create(t, acmeKey, "detail-1", c.body)
		d, _ := r.body["detail"].(string)
		if r.status != http.StatusBadRequest || r.header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s, want a 400 problem", c.body, r.status, r.raw)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(d, w) {
				t.Errorf("%s: detail %q lacks %q", c.body, d, w)
			}
		}
		for _, leak := range []string{"Go struct", "Go value", "api.", "createJobRequest", "json: "} {
			if strings.Contains(d, leak) {
				t.Errorf("%s: detail %q speaks of the router's code (%q)", c.body, d, leak)
			}
		}
	}
	// The resolve body likewise.
	id := b.create(t, acmeKey, "detail-resolve", triageBody("x"), "Prefer", "wait=10").job()
	r := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":1}`)
	if d, _ := r.body["detail"].(string); r.status != http.StatusBadRequest || !strings.Contains(d, `"outcome"`) || strings.Contains(d, "Go struct") {
		t.Errorf("resolve: %d %s", r.status, r.raw)
	}
	// And chat, in OpenAI's shape, with the field as param.
	r = b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":1,"messages":[]}`)
	e, _ := r.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if r.status != http.StatusBadRequest || e["code"] != "invalid_json" || e["param"] != "model" ||
		!strings.Contains(msg, `"model"`) || strings.Contains(msg, "Go struct") {
		t.Errorf("chat: %d %s, want 400 invalid_json naming the field as param", r.status, r.raw)
	}
	r = b.do(t, "POST", "/v1/chat/completions", acmeKey, ``)
	e, _ = r.body["error"].(map[string]any)
	if msg, _ := e["message"].(string); r.status != http.StatusBadRequest || !strings.Contains(msg, "empty") {
		t.Errorf("chat, empty body: %d %s", r.status, r.raw)
	}
}
