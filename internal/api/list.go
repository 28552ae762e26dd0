package api

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	rfcproblem "github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/store"
)

const (
	defaultListLimit = 50
	maxListLimit     = 200
)

// listScan is how many jobs a page filtered by operation or by a state that is
// not live examines at most (store.ListFilter.Scan): 0, the store's default.
// Tests set it small, to page through short and empty pages without thousands
// of jobs.
var listScan int

// listParams are the query parameters GET /v1/jobs reads, in the order its
// rejections list them. Each takes one value.
var listParams = []string{"state", "operation", "created_after", "created_before", "limit", "cursor"}

// listJobs serves GET /v1/jobs (SPEC §16): the owner's jobs newest first, with
// an opaque keyset cursor. A page filtered by operation, or by a state that is
// not live, examines a bounded number of the owner's jobs (store.ListJobs), so
// it may be short or empty with a next_cursor: the cursor then continues after
// the last job examined, and carries the filters like any other. A page of
// large jobs is cut short too (listPageBytes), after its last job. A filter
// that can match no job is a 400 naming the value and what it may be: a state
// that is no job state, or an operation this replica does not run
// (knownOperations) of which the first page, read to the listing's end, held
// no job; an operation that is not run here but is some of the caller's jobs'
// lists them as any other.
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	bad := func(title, detail string) {
		writeProblem(w, r, problem{Status: http.StatusBadRequest, Type: "invalid-request", Title: title, Detail: detail})
	}
	// url.Values from r.URL.Query() drops the pairs it cannot decode, and a
	// filter dropped silently lists more than the caller asked for.
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		bad("Malformed query string", "the query string cannot be decoded ("+err.Error()+"); "+
			"percent-encode reserved characters in values and separate parameters with &")
		return
	}
	if title, detail := checkListParams(q); title != "" {
		bad(title, detail)
		return
	}
	if op := q.Get("operation"); !utf8.ValidString(op) || strings.IndexByte(op, 0) >= 0 {
		// SPEC §17: input that is not UTF-8 is a 400, not an empty page (no
		// operation is named so: the store's own guard lists none).
		bad("Malformed operation", "operation must be UTF-8 text without NUL: an operation's name, such as triage, "+
			"percent-encoded as UTF-8")
		return
	}
	f := store.ListFilter{Owner: ownerFrom(r.Context()), State: q.Get("state"), Operation: q.Get("operation"),
		Limit: defaultListLimit, Scan: listScan, MaxBytes: listPageBytes}
	if f.State != "" && !slices.Contains(listStates, f.State) {
		bad("Unknown state", unknownStateDetail(f.State))
		return
	}
	for name, dst := range map[string]*time.Time{"created_after": &f.CreatedAfter, "created_before": &f.CreatedBefore} {
		if v := q.Get(name); v != "" {
			t, err := parseBound(v)
			if err != nil {
				bad("Malformed "+name, name+" must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not "+
					strconv.Quote(rfcproblem.Clip(v)))
				return
			}
			if t.Before(minListBound) {
				bad(name+" out of range", outOfRange(name, v))
				return
			}
			*dst = t
		}
	}
	if !f.CreatedAfter.IsZero() && !f.CreatedBefore.IsZero() && f.CreatedAfter.After(f.CreatedBefore) {
		// Both bounds are exclusive: no job is in that range, and an empty
		// 200 would read as "no such jobs" rather than as the swapped bounds.
		bad("Inverted time bounds", fmt.Sprintf("created_after (%s) is later than created_before (%s), so no job can match; "+
			"created_after is the earlier bound and created_before the later one: swap them",
			f.CreatedAfter.Format(time.RFC3339Nano), f.CreatedBefore.Format(time.RFC3339Nano)))
		return
	}
	if v := q.Get("limit"); v != "" {
		n, ok := plainDigits(v)
		if !ok || n < 1 || n > maxListLimit {
			bad("Malformed limit", "limit must be a whole number from 1 to "+strconv.Itoa(maxListLimit)+
				", not "+strconv.Quote(rfcproblem.Clip(v))+limitWritten(ok))
			return
		}
		f.Limit = int(n)
	}
	filters := filterHash(f)
	if v := q.Get("cursor"); v != "" {
		c, err := decodeCursor(v)
		if err != nil {
			bad("Malformed cursor", "cursor must be a next_cursor value returned by GET /v1/jobs, unchanged")
			return
		}
		// A cursor without filters is one issued before cursors carried
		// them: still honoured, unchecked, so that listings paging across
		// an upgrade go on (a cursor lives as long as one listing).
		if c.F != "" && c.F != filters {
			bad("Cursor for other filters", "cursor was issued for different filters; start again without cursor, "+
				"or send it with the state, operation, created_after and created_before it was issued with "+
				"(limit may change between pages)")
			return
		}
		f.After = &store.ListPosition{CreatedAt: c.T, ID: c.ID}
	}
	jobs, next, err := s.Store.ListJobs(r.Context(), f)
	if err != nil {
		s.internalError(w, r, "list jobs", err)
		return
	}
	if f.Operation != "" && f.State == "" && f.CreatedAfter.IsZero() && f.CreatedBefore.IsZero() &&
		f.After == nil && len(jobs) == 0 && next == nil {
		// An operation this replica does not run may still be that of the
		// caller's jobs (a prompt retired since, or loaded by another
		// replica; chat completions of a route another replica serves):
		// refused only once the whole listing, read to its end with no
		// other filter, held none of them, where an empty page would hide
		// a typo. With a state or time bound an empty page says nothing of
		// the operation (a poller's window with no new job): listed empty.
		if known := s.knownOperations(); !slices.Contains(known, f.Operation) {
			bad("Unknown operation", unknownOperationDetail(f.Operation, known))
			return
		}
	}
	at := func(p store.ListPosition) string { return encodeCursor(cursor{T: p.CreatedAt, ID: p.ID, F: filters}) }
	var cur *string
	if next != nil {
		c := at(*next)
		cur = &c
	}
	writeJobPage(w, s.cfg.StreamWriteStall, jobPage{jobs: jobs, next: cur, budget: listPageBytes,
		cursorAt: func(last *store.Job) string { return at(store.ListPosition{CreatedAt: last.CreatedAt, ID: last.ID}) },
		step:     s.nextSteps(r.Context())})
}

// limitWritten is what a refused limit that is not plain digits (a sign, a
// space, a decimal point: "%2B5" arrives as "+5") is told of how to write
// it; one that is digits is told only the range.
func limitWritten(digits bool) string {
	if digits {
		return ""
	}
	return "; write it in digits only, without a sign, space or decimal point (limit=20)"
}

// listPageBytes is the most a page of GET /v1/jobs holds of encoded jobs, and
// one job more: once the jobs written come to more than this, the page ends
// there, with a next_cursor after its last job (as a page cut by its limit).
// A job carries its whole input (up to http.max_body_bytes) and result, so
// limit jobs alone could make one answer of hundreds of MiB. Every page holds
// at least one job.
const listPageBytes = 4 << 20

// minListBound is the earliest created_after or created_before accepted: the
// Unix epoch, before any job was created. The store reads a zero time as no
// bound (store.ListFilter), so a bound at or near Go's zero time (year 1) would
// list every job where it should list none; earlier bounds are refused.
var minListBound = time.Unix(0, 0).UTC()

// outOfRange says why a time bound before minListBound is refused, and what
// to send instead.
func outOfRange(name, v string) string {
	instead := "leave created_after out to list from the oldest job"
	if name == "created_before" {
		instead = "no job was created that early, so the listing would be empty"
	}
	return fmt.Sprintf("%s must be an RFC 3339 time from %s on; %s is earlier: %s",
		name, minListBound.Format(time.RFC3339), v, instead)
}

// checkListParams returns the title and detail of the rejection of a query
// that names a parameter GET /v1/jobs does not read (a typo such as "stat"
// would otherwise list every job) or gives one more than once (the listing
// filters by one value of each) or gives an empty cursor, or empty strings
// when q is fine. An empty cursor is not taken as no cursor: it would restart
// the listing, so a pager whose next cursor came out empty (a null
// next_cursor turned into "") would page through the first pages for ever.
// An empty filter or limit is still no filter or the default limit, as SPEC
// §16 writes them ("?state=&operation=&…&limit=").
func checkListParams(q url.Values) (title, detail string) {
	var unknown, repeated []string
	emptyCursor := false
	for name, vs := range q {
		switch {
		case !slices.Contains(listParams, name):
			unknown = append(unknown, name)
		case len(vs) > 1:
			repeated = append(repeated, name)
		case name == "cursor" && vs[0] == "":
			emptyCursor = true
		}
	}
	accepted := strings.Join(listParams, ", ")
	var says []string
	if len(unknown) > 0 {
		quoted := quotedParams(unknown)
		title = "Unknown query parameter"
		says = append(says, "GET /v1/jobs does not take "+strings.Join(quoted, ", ")+
			"; it takes "+accepted+". Remove or correct "+plural(len(unknown), "it", "them")+".")
		for i, name := range unknown {
			if p := listParamHint(name); p != "" {
				says = append(says, "For "+quoted[i]+", did you mean "+p+"?")
			}
		}
	}
	if len(repeated) > 0 {
		slices.Sort(repeated)
		if title == "" {
			title = "Repeated query parameter"
		}
		says = append(says, strings.Join(repeated, ", ")+" given more than once; "+
			"each of "+accepted+" takes one value. Send "+plural(len(repeated), "it", "each")+" once.")
	}
	if emptyCursor {
		if title == "" {
			title = "Empty cursor"
		}
		says = append(says, "cursor is empty: send a next_cursor value returned by GET /v1/jobs, or leave cursor out to start "+
			"the listing. An empty cursor would restart the listing: the last page has next_cursor null, so stop paging there.")
	}
	return title, strings.Join(says, " ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// cursor is the opaque next_cursor: the position of the page's last job and
// the filters it was issued for (filterHash), so that a cursor sent with other
// filters is refused rather than continuing a listing it was not part of.
type cursor struct {
	T  time.Time `json:"t"`
	ID string    `json:"id"`
	F  string    `json:"f,omitempty"`
}

// filterHash names f's filters (not its owner, limit or position) in a few
// bytes: the first 8 of a SHA-256 of their normalized form, which is the same
// for every spelling of the same bounds (offsets, digits below PostgreSQL's
// microsecond). It tells two filter sets apart, it does not authenticate them.
func filterHash(f store.ListFilter) string {
	f = f.Normalized()
	var at [2]string
	for i, t := range []time.Time{f.CreatedAfter, f.CreatedBefore} {
		if !t.IsZero() {
			at[i] = t.Format(time.RFC3339Nano)
		}
	}
	b, _ := json.Marshal([]string{f.State, f.Operation, at[0], at[1]})
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:8])
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, err
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil {
		return cursor{}, err
	}
	if _, err := uuid.Parse(c.ID); err != nil || c.T.IsZero() {
		return cursor{}, errors.New("bad cursor")
	}
	return c, nil
}

// jobEvents serves GET /v1/jobs/{id}/events: the job's completion events with
// each delivery try.
func (s *Server) jobEvents(w http.ResponseWriter, r *http.Request) {
	owner, id := ownerFrom(r.Context()), r.PathValue("id")
	if s.refuseJobQuery(w, r, owner, id, "GET /v1/jobs/{id}/events", "it has no options: it lists every event of the job, "+
		"with every delivery try, in one answer (no paging, no filter)") {
		return
	}
	events, err := s.Store.JobEvents(r.Context(), owner, id)
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

// parseBound reads created_after or created_before: an RFC 3339 time at any
// precision. RFC 3339 lets its "T" and "Z" be written lowercase (§5.6), which
// time.Parse refuses: they are read as uppercase. Its note to §5.6 lets the
// "T" be a space too (2026-01-02 15:04:05Z, as SQL and many formatters write
// it, and as a '+' in its place reads after query decoding): read as "T". A
// '+' of the offset sent unencoded (…T15:04:05+01:00) reads as a space after
// query decoding: read as '+'.
func parseBound(v string) (time.Time, error) {
	if len(v) > 10 && (v[10] == 't' || v[10] == ' ') {
		v = v[:10] + "T" + v[11:]
	}
	if n := len(v) - 1; n > 0 && v[n] == 'z' {
		v = v[:n] + "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if n := len(v) - 6; err != nil && n > 0 && v[n] == ' ' {
		t, err = time.Parse(time.RFC3339Nano, v[:n]+"+"+v[n+1:])
	}
	return t, err
}
