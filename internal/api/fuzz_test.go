package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/routerhq/router/internal/prompt"
)

// FuzzParseJobBody: any POST /v1/jobs body either becomes a job to store or a
// 400/413/422 problem — never a panic — and what would be stored is a compact
// JSON object of valid UTF-8 without escapes the database refuses, with a
// fingerprint.
func FuzzParseJobBody(f *testing.F) {
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		f.Fatal(err)
	}
	s := New(Config{MaxBodyBytes: 64 << 10}, Deps{Prompts: prompts, Routes: map[string]bool{"default": true}})
	for _, seed := range []string{
		`{"prompt":"triage","input":{"subject":"Login","body":"I cannot log in since yesterday."}}`,
		`{"prompt":"triage","input":{"subject":"a\u0000b","body":"x"}}`,
		`{"prompt":"triage","input":{"subject":"\ud800","body":"x"}}`,
		`{"prompt":"triage","input":{"subject":"\ud83d\ude00","body":"x \\u0000"}}`,
		"{\"prompt\":\"triage\",\"input\":{\"subject\":\"\xff\",\"body\":\"x\"}}",
		`{"prompt":"triage","input":[1]}`, `{"prompt":"nope","input":{}}`, `{"prompt":"triage","route":"x","input":{}}`,
		`{"prompt":"triage","input":{}} {}`, `{"prompt":"triage","extra":1}`, `{`, ``, `null`,
		`{"prompt":"invoice","prompt_version":"3","input":{"document":"INV-1 total 10.00"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/v1/jobs", bytes.NewReader(body))
		nj, perr := s.parseJob(w, r, "acme", "k")
		if perr != nil {
			switch perr.Status {
			case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
			case http.StatusServiceUnavailable: // prompt-unavailable: a version another replica may load
				if perr.Type != "prompt-unavailable" || perr.RetryAfter <= 0 {
					t.Fatalf("503 for a bad body: %+v", perr)
				}
			default:
				t.Fatalf("status %d for a bad body: %+v", perr.Status, perr)
			}
			if perr.Detail == "" || perr.Title == "" || perr.Type == "" {
				t.Fatalf("a problem without type, title or detail: %+v", perr)
			}
			return
		}
		in := []byte(nj.Input)
		var obj map[string]any
		if err := json.Unmarshal(in, &obj); err != nil {
			t.Fatalf("accepted input is not a JSON object: %q", in)
		}
		var c bytes.Buffer
		if json.Compact(&c, in) != nil || !bytes.Equal(c.Bytes(), in) {
			t.Fatalf("stored input is not compact: %q", in)
		}
		if !utf8.Valid(in) || checkEncoding(in) != nil {
			t.Fatalf("accepted input the database would refuse: %q", in)
		}
		if len(nj.Fingerprint) != 32 || nj.Operation == "" || nj.Route == "" {
			t.Fatalf("incomplete job: %+v", nj)
		}
	})
}

// FuzzProblemJSON: every problem+json answer is one valid JSON object with
// type (a URI), title, status (the HTTP status) and detail, whatever the
// strings hold.
func FuzzProblemJSON(f *testing.F) {
	f.Add("invalid-json", "Malformed JSON body", "the body is not valid JSON", 400, "", "routing", "x")
	f.Add("https://example.com/p", "T", "d \x00 \xff \u2028 </script>", 422, "job-1", "status", "shadow")
	f.Add("", "", "", 0, "", "", "")
	f.Add("hello", "t", "d", 503, "", "type", "x")
	f.Fuzz(func(t *testing.T, typ, title, detail string, status int, jobID, extraKey, extraVal string) {
		if status < 100 || status > 599 {
			status = 400 + (status%200+200)%200
		}
		p := problem{Type: typ, Title: title, Status: status, Detail: detail, JobID: jobID}
		if extraKey != "" {
			p.Extra = map[string]any{extraKey: extraVal}
		}
		w := httptest.NewRecorder()
		writeProblem(w, httptest.NewRequest("GET", "/v1/jobs/x", nil), p)
		if w.Code != status {
			t.Fatalf("HTTP status %d, want %d", w.Code, status)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
			t.Fatalf("content type %q", ct)
		}
		dec := json.NewDecoder(w.Body)
		var body map[string]any
		if err := dec.Decode(&body); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		if dec.More() {
			t.Fatal("more than one JSON value")
		}
		if !utf8.Valid([]byte(w.Body.String())) {
			t.Fatal("not UTF-8")
		}
		for _, k := range []string{"type", "title", "status", "detail"} {
			if _, ok := body[k]; !ok {
				t.Fatalf("field %q missing: %v", k, body)
			}
		}
		if st, _ := body["status"].(float64); int(st) != status {
			t.Fatalf("status field %v, want %d", body["status"], status)
		}
		if ty, _ := body["type"].(string); !strings.HasPrefix(ty, "https://") && !strings.HasPrefix(ty, "http://") && ty != "about:blank" {
			t.Fatalf("type %q is not a URI", ty)
		}
	})
}
