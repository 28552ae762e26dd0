package api

import (
	"encoding/json"
	"net/http"
	"sync"

	rfcproblem "github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/store"
)

// problem is a tenant API problem: the members of every problem (written by
// internal/problem, with the request id) and the API's own, the job it is
// about and the violations of a rejected input or result.
type problem struct {
	Type       string
	Title      string
	Status     int
	Detail     string
	Instance   string
	JobID      string
	Violations any
	// Extra holds further members; it never replaces the ones above.
	Extra map[string]any
}

// apiMembers are the API's own members, written as they always were: through
// JSON and back, so that a value's own members come in name order.
type apiMembers struct {
	JobID      string `json:"job_id,omitempty"`
	Violations any    `json:"violations,omitempty"`
}

func writeProblem(w http.ResponseWriter, r *http.Request, p problem) {
	extra := make(map[string]any, len(p.Extra)+2)
	for k, v := range p.Extra {
		if k != "job_id" && k != "violations" {
			extra[k] = v
		}
	}
	if p.JobID != "" {
		// Every response that names a job carries its id (docs/api.md).
		w.Header().Set("X-Router-Job-Id", p.JobID)
	}
	raw, _ := json.Marshal(apiMembers{JobID: p.JobID, Violations: p.Violations})
	_ = json.Unmarshal(raw, &extra)
	rfcproblem.Write(w, r, rfcproblem.Details{Type: p.Type, Title: p.Title, Status: p.Status, Detail: p.Detail,
		Instance: p.Instance, RequestID: RequestID(r.Context()), Extra: extra})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeAppended is writeJSON for a body that appendBody writes, by hand,
// as json.Encoder would (a newline follows it, as Encode ends), in one Write
// from a pooled buffer.
func writeAppended(w http.ResponseWriter, status int, appendBody func([]byte) []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	p := jobBufs.Get().(*[]byte)
	buf := append(appendBody((*p)[:0]), '\n')
	_, _ = w.Write(buf)
	if cap(buf) <= maxPooledJobBuf {
		*p = buf
		jobBufs.Put(p)
	}
}

// writeJob is writeJSON for a job: store.Job.AppendJSON writes the bytes
// json.Encoder would, without reflection and without validating the job's raw
// JSON members again.
func writeJob(w http.ResponseWriter, status int, job *store.Job) {
	writeAppended(w, status, job.AppendJSON)
}

// writeRawJSON is writeJSON for a value already encoded by encoding/json
// (compact, HTML-safe).
func writeRawJSON(w http.ResponseWriter, status int, raw []byte) {
	writeAppended(w, status, func(b []byte) []byte { return append(b, raw...) })
}

// writeJobList is writeJSON for a page of GET /v1/jobs,
// {"data": [...], "next_cursor": ...}.
func writeJobList(w http.ResponseWriter, jobs []*store.Job, next *string) {
	writeAppended(w, http.StatusOK, func(buf []byte) []byte {
		buf = append(buf, `{"data":[`...)
		for i, j := range jobs {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = j.AppendJSON(buf)
		}
		buf = append(buf, `],"next_cursor":`...)
		if next == nil {
			return append(buf, "null}"...)
		}
		c, _ := json.Marshal(*next) // a string always encodes
		return append(append(buf, c...), '}')
	})
}

// jobBufs holds the buffers writeJob encodes into: reusing them cuts its time
// by about 40% (BenchmarkJobJSON in internal/store). One that grew past
// maxPooledJobBuf for a job with a large input or result is left to the
// collector rather than kept.
var jobBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledJobBuf = 64 << 10
