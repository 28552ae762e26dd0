package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A refusal quotes the caller's string (a prompt's, route's or member's
// name, a version, a chat role, a content part's type, a reasoning_effort,
// the number given to a member of another type) clipped, as every
// other refusal does (problem.Clip): a request of 0.9 MB refused for one
// unknown name is answered in a few hundred bytes, not with the name whole —
// up to four times over, and six bytes for each one JSON escapes. The
// answer still shows where the name starts, and says how to fix it. Found by
// review.
func TestRefusalsQuoteCallerStringsClipped(t *testing.T) {
	b := setup(t, options{})
	big := strings.Repeat("p", 900_000)
	zeros := strings.Repeat("0", 900_000)
	const maxAnswer = 16 << 10
	cases := []struct{ name, path, key, body, says string }{
		{"unknown prompt", "/v1/jobs", "e1", `{"prompt":"` + big + `","input":{}}`, "loaded: "},
		{"unknown route", "/v1/jobs", "e2", `{"prompt":"triage","route":"` + big + `","input":{"subject":"x","body":"y"}}`, "name one of the configured routes"},
		{"unknown prompt version", "/v1/jobs", "e3", `{"prompt":"triage","prompt_version":"` + big + `","input":{"subject":"x","body":"y"}}`, "is loaded at version"},
		{"input member not in schema", "/v1/jobs", "e4", `{"prompt":"triage","input":{"` + big + `":1,"subject":"x","body":"y"}}`, "is not allowed by the schema"},
		{"unknown member", "/v1/jobs", "e8", `{"prompt":"triage","` + big + `":1,"input":{"subject":"x","body":"y"}}`, "this endpoint takes"},
		{"duplicate input member", "/v1/jobs", "e9", `{"prompt":"triage","input":{"subject":"x","body":"y","` + big[:400_000] + `":1,"` + big[:400_000] + `":2}}`, "send each key once"},
		{"unknown role", "/v1/chat/completions", "e6", `{"model":"default","messages":[{"role":"` + big + `","content":"hi"}]}`, "use system, developer, user, assistant or tool"},
		{"unknown content part", "/v1/chat/completions", "e7", `{"model":"default","messages":[{"role":"user","content":[{"type":"` + big + `"}]}]}`, "only text parts are"},
		{"unknown response_format type", "/v1/chat/completions", "e10", `{"model":"default","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"` + big + `"}}`, "is not text, json_object or json_schema"},
		{"unknown tool_choice", "/v1/chat/completions", "e11", `{"model":"default","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"` + big + `"}`, "is not none, auto, required"},
		{"logit_bias key not a token", "/v1/chat/completions", "e12", `{"model":"default","messages":[{"role":"user","content":"hi"}],"logit_bias":{"` + big + `":1}}`, "is not a token id"},
		{"logit_bias bias out of range", "/v1/chat/completions", "e13", `{"model":"default","messages":[{"role":"user","content":"hi"}],"logit_bias":{"` + zeros + `7":1000}}`, "a bias must be a whole number"},
		{"logit_bias token twice", "/v1/chat/completions", "e14", `{"model":"default","messages":[{"role":"user","content":"hi"}],"logit_bias":{"0":1,"` + zeros + `":2}}`, "give each token once"},
		{"unknown reasoning_effort", "/v1/chat/completions", "e15", `{"model":"default","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"` + big + `"}`, "is not one of"},
		{"wrong-typed number", "/v1/chat/completions", "e16", `{"model":"default","messages":[{"role":"user","content":"hi"}],"max_tokens":1.` + zeros + `}`, "must be a whole number, not the number 1.0"},
	}
	for _, c := range cases {
		r := b.do(t, "POST", c.path, acmeKey, c.body, "Idempotency-Key", c.key)
		// An unknown version is 503 prompt-unavailable while a rolling
		// update may be under way (this replica started just now).
		if (r.status < 400 || r.status >= 500) && (c.key != "e3" || r.status != http.StatusServiceUnavailable) {
			t.Errorf("%s: status %d, want a 4xx refusal", c.name, r.status)
		}
		if len(r.raw) > maxAnswer {
			t.Errorf("%s: a %d-byte request was refused (%d) with a %d-byte answer: the caller's string is quoted whole", c.name, len(c.body), r.status, len(r.raw))
			continue
		}
		if body := string(r.raw); !strings.Contains(body, c.says) || !strings.Contains(body, "…") {
			t.Errorf("%s: %d %s; want it to say %q, quoting the caller's string clipped (…)", c.name, r.status, body, c.says)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored for refused requests", n)
	}
}
