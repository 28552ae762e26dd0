package api

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/routerhq/router/internal/store"
)

const (
	defaultListLimit = 50
	maxListLimit     = 200
)

// listJobs serves GET /v1/jobs (SPEC §16): the owner's jobs newest first, with
// an opaque keyset cursor.
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.ListFilter{Owner: ownerFrom(r.Context()), State: q.Get("state"), Operation: q.Get("operation"), Limit: defaultListLimit}
	bad := func(title, detail string) {
		writeProblem(w, r, problem{Status: http.StatusBadRequest, Type: "invalid-request", Title: title, Detail: detail})
	}
	switch f.State {
	case "", store.JobPending, store.JobRunning, store.JobSucceeded, store.JobFailed, store.JobCancelled, store.JobUnknown:
	default:
		bad("Unknown state", "state must be one of pending, running, succeeded, failed, cancelled, unknown")
		return
	}
	for name, dst := range map[string]*time.Time{"created_after": &f.CreatedAfter, "created_before": &f.CreatedBefore} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if n := len(v) - 6; err != nil && n > 0 && v[n] == ' ' {
				// A '+' of the offset sent unencoded (…T15:04:05+01:00)
				// reads as a space after query decoding.
				t, err = time.Parse(time.RFC3339Nano, v[:n]+"+"+v[n+1:])
			}
			if err != nil {
				bad("Malformed "+name, name+" must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
				return
			}
			*dst = t
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			bad("Malformed limit", "limit must be a whole number from 1 to "+strconv.Itoa(maxListLimit))
			return
		}
		f.Limit = n
	}
	if v := q.Get("cursor"); v != "" {
		pos, err := decodeCursor(v)
		if err != nil {
			bad("Malformed cursor", "cursor must be a next_cursor value returned by GET /v1/jobs, unchanged")
			return
		}
		f.After = pos
	}
	jobs, next, err := s.Store.ListJobs(r.Context(), f)
	if err != nil {
		s.internalError(w, r, "list jobs", err)
		return
	}
	var cursor *string
	if next != nil {
		c := encodeCursor(next)
		cursor = &c
	}
	writeJobList(w, jobs, cursor)
}

type cursor struct {
	T  time.Time `json:"t"`
	ID string    `json:"id"`
}

func encodeCursor(p *store.ListPosition) string {
	b, _ := json.Marshal(cursor{T: p.CreatedAt, ID: p.ID})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (*store.ListPosition, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	if _, err := uuid.Parse(c.ID); err != nil || c.T.IsZero() {
		return nil, errors.New("bad cursor")
	}
	return &store.ListPosition{CreatedAt: c.T, ID: c.ID}, nil
}

// jobEvents serves GET /v1/jobs/{id}/events: the job's completion events with
// each delivery try.
func (s *Server) jobEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	events, err := s.Store.JobEvents(r.Context(), ownerFrom(r.Context()), id)
	if errors.Is(err, store.ErrNotFound) {
		writeProblem(w, r, notFoundProblem(id))
		return
	}
	if err != nil {
		s.internalError(w, r, "list events", err)
		return
	}
	if events == nil {
		events = []*store.Event{}
	}
	w.Header().Set("X-Router-Job-Id", id) // the job's events name it (docs/api.md)
	writeJSON(w, http.StatusOK, map[string]any{"data": events})
}
