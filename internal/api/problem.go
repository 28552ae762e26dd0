package api

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

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
	// RetryAfter, when positive, is sent as the Retry-After header.
	RetryAfter time.Duration
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
	if p.RetryAfter > 0 {
		w.Header().Set("Retry-After", retryAfterSeconds(p.RetryAfter))
	}
	if p.JobID != "" {
		// Every response that names a job carries its id (docs/api.md).
		w.Header().Set("X-Router-Job-Id", p.JobID)
	}
	raw, _ := json.Marshal(apiMembers{JobID: p.JobID, Violations: p.Violations})
	_ = json.Unmarshal(raw, &extra)
	armWrite(w, bodyWriteStall) // a problem is one small write
	rfcproblem.Write(w, r, rfcproblem.Details{Type: p.Type, Title: p.Title, Status: p.Status, Detail: p.Detail,
		Instance: p.Instance, RequestID: RequestID(r.Context()), Extra: extra})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v)
	_ = writeBody(w, bodyWriteStall, b.Bytes())
}

// bodyWriteStall is the longest one write of a non-streamed answer may wait
// for the caller to take it where the server's Config.StreamWriteStall is not
// at hand: that setting's default. The HTTP server has no write timeout (long
// waits, streams), so a caller that stops reading without closing its
// connection would otherwise hold the handler, and the body it is writing,
// for as long as the connection lasts (streamWrites bounds a stream's writes
// the same way).
const bodyWriteStall = 30 * time.Second

// bodyChunkBytes is the most one write of a non-streamed body sends: each
// piece gets its own stall, so a large body is not cut from a caller that
// reads it slowly but steadily.
const bodyChunkBytes = 64 << 10

// armWrite gives w's next write stall to go out. A writer that takes no
// deadline (http.ErrNotSupported: a test's recorder, a wrapper without
// Unwrap) is written to without one. net/http clears the deadline when the
// response is done, before the connection's next request.
func armWrite(w http.ResponseWriter, stall time.Duration) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(stall))
}

// writeBody writes b in pieces of at most bodyChunkBytes, each within stall
// of being handed to the connection. The first write that fails (the caller
// left, or stopped reading for stall) ends it, and its error is returned:
// every later write on the connection would fail too.
func writeBody(w http.ResponseWriter, stall time.Duration, b []byte) error {
	rc := http.NewResponseController(w)
	for len(b) > 0 {
		n := min(len(b), bodyChunkBytes)
		_ = rc.SetWriteDeadline(time.Now().Add(stall))
		if _, err := w.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// writeAppended is writeJSON for a body that appendBody writes, by hand,
// as json.Encoder would (a newline follows it, as Encode ends), from a
// pooled buffer, in pieces each within bodyWriteStall (writeBody).
func writeAppended(w http.ResponseWriter, status int, appendBody func([]byte) []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	p := jobBufs.Get().(*[]byte)
	buf := append(appendBody((*p)[:0]), '\n')
	_ = writeBody(w, bodyWriteStall, buf)
	putJobBuf(p, buf)
}

// putJobBuf returns buf, taken from jobBufs as p, to the pool unless it grew
// past maxPooledJobBuf.
func putJobBuf(p *[]byte, buf []byte) {
	if cap(buf) <= maxPooledJobBuf {
		*p = buf[:0]
		jobBufs.Put(p)
	}
}

// writeJob is writeJSON for a job: store.Job.AppendJSON writes the bytes
// json.Encoder would, without reflection and without validating the job's raw
// JSON members again; appendJob adds a failed job's next_step (step, when not
// "": this replica's, retiredStep).
func writeJob(w http.ResponseWriter, status int, job *store.Job, step string) {
	writeAppended(w, status, func(b []byte) []byte { return appendJob(b, job, step) })
}

// writeRawJSON is writeJSON for a value already encoded by encoding/json
// (compact, HTML-safe).
func writeRawJSON(w http.ResponseWriter, status int, raw []byte) {
	writeAppended(w, status, func(b []byte) []byte { return append(b, raw...) })
}

// writeJobList is writeJSON for a page of GET /v1/jobs already cut,
// {"data": [...], "next_cursor": ...}: every job of jobs, then next.
func writeJobList(w http.ResponseWriter, jobs []*store.Job, next *string) {
	writeJobPage(w, bodyWriteStall, jobPage{jobs: jobs, next: next})
}

// jobPage is a page of GET /v1/jobs to write (writeJobPage).
type jobPage struct {
	jobs []*store.Job
	// next is the next_cursor when every job of jobs is written (nil: none).
	next *string
	// budget, when above 0, cuts the page short: once the jobs written
	// come to more than budget bytes, no further job is added, and the
	// next_cursor is cursorAt of the last one written, as a page cut by its
	// limit has the position of its last job.
	budget   int
	cursorAt func(last *store.Job) string
	// step, when not nil, gives a job's next_step as this replica knows it
	// (Server.nextSteps; "" for race.NextStep's).
	step func(*store.Job) string
}

// writeJobPage is writeJSON for a page of GET /v1/jobs, {"data": [...],
// "next_cursor": ...}, encoded job by job into a pooled buffer that is
// written out (writeBody, within stall) whenever it holds bodyChunkBytes, so
// that a page of large jobs is never held whole. It returns once a write
// fails: the caller is gone or stopped reading.
func writeJobPage(w http.ResponseWriter, stall time.Duration, p jobPage) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	bp := jobBufs.Get().(*[]byte)
	buf := append((*bp)[:0], `{"data":[`...)
	next, written := p.next, 0
	for i, j := range p.jobs {
		if i > 0 {
			buf = append(buf, ',')
		}
		n := len(buf)
		step := ""
		if p.step != nil {
			step = p.step(j)
		}
		buf = appendJob(buf, j, step)
		written += len(buf) - n
		if len(buf) >= bodyChunkBytes {
			if err := writeBody(w, stall, buf); err != nil {
				putJobBuf(bp, buf)
				return
			}
			buf = buf[:0]
		}
		if p.budget > 0 && written > p.budget && i < len(p.jobs)-1 {
			c := p.cursorAt(j)
			next = &c
			break
		}
	}
	buf = append(buf, `],"next_cursor":`...)
	if next == nil {
		buf = append(buf, "null}\n"...)
	} else {
		c, _ := json.Marshal(*next) // a string always encodes
		buf = append(append(buf, c...), "}\n"...)
	}
	_ = writeBody(w, stall, buf)
	putJobBuf(bp, buf)
}

// logPathBytes is the most of a request's path its log lines carry (the
// access line, a panic's): a path is the caller's, up to net/http's header
// limit (about 1 MiB) on any request, authenticated or not.
const logPathBytes = 2 << 10

// loggedPath is the "path" attribute of a request's log lines: path, or
// when it is longer than logPathBytes its first logPathBytes (cut at a
// character's start) with "…", and path_bytes, its whole length.
func loggedPath(path string) slog.Attr {
	if len(path) <= logPathBytes {
		return slog.String("path", path)
	}
	cut := logPathBytes
	for cut > 0 && !utf8.RuneStart(path[cut]) {
		cut--
	}
	// An empty key inlines the group: path=… path_bytes=N.
	return slog.Group("", slog.String("path", path[:cut]+"…"), slog.Int("path_bytes", len(path)))
}

// jobBufs holds the buffers writeJob encodes into: reusing them cuts its time
// by about 40% (BenchmarkJobJSON in internal/store). One that grew past
// maxPooledJobBuf for a job with a large input or result is left to the
// collector rather than kept.
var jobBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledJobBuf = 64 << 10
