package api

import (
	"encoding/json"
	"net/http"
	"strings"
)

// problemBase prefixes every problem type URI.
const problemBase = "https://router.dev/problems/"

// problem is an RFC 9457 problem detail.
type problem struct {
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Status     int            `json:"status"`
	Detail     string         `json:"detail"`
	Instance   string         `json:"instance,omitempty"`
	JobID      string         `json:"job_id,omitempty"`
	Violations any            `json:"violations,omitempty"`
	Extra      map[string]any `json:"-"`
}

// problemFields are the members of the problem itself: Extra never replaces them.
var problemFields = map[string]bool{"type": true, "title": true, "status": true, "detail": true,
	"instance": true, "job_id": true, "violations": true}

func writeProblem(w http.ResponseWriter, r *http.Request, p problem) {
	switch {
	case p.Type == "":
		p.Type = "about:blank" // RFC 9457 §4.2.1
	case !strings.HasPrefix(p.Type, "https://") && !strings.HasPrefix(p.Type, "http://"):
		p.Type = problemBase + p.Type
	}
	if p.Instance == "" {
		p.Instance = r.URL.Path
	}
	body := map[string]any{}
	raw, _ := json.Marshal(p)
	_ = json.Unmarshal(raw, &body)
	for k, v := range p.Extra {
		if !problemFields[k] {
			body[k] = v
		}
	}
	if rid := RequestID(r.Context()); rid != "" {
		body["request_id"] = rid
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
