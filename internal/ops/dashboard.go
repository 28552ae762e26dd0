package ops

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/routerhq/router/internal/store"
)

//go:embed dashboard/*.html
var dashboardFS embed.FS

var dashboardTmpl = template.Must(template.New("dashboard.html").Funcs(template.FuncMap{
	"pct": func(f *float64) string {
		if f == nil {
			return "–"
		}
		return fmt.Sprintf("%.1f%%", *f*100)
	},
	"ms": func(f *float64) string {
		if f == nil {
			return "–"
		}
		return fmtMS(*f)
	},
	// ago is how long before now (dashData.Now: the database's clock) t
	// was: {{ago $.Now .ChangedAt}}.
	"ago":   func(now, t time.Time) string { return ago(now.Sub(t)) },
	"short": func(id string) string { return shortID(id) },
	"clock": clock,
	"usd":   usd,
	"msf":   func(f float64) string { return fmtMS(f) },
	"cause": deliveryCause,
}).ParseFS(dashboardFS, "dashboard/dashboard.html"))

// dashboard serves GET /dashboard: a self-refreshing, server-rendered
// operator page with no external assets. It shows owners, operations, states,
// providers and timings, never inputs or results (see docs/operations.md) —
// nor a job's error text, which can quote them (failureSummary).
func (s *Server) dashboard() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data := s.dashboardData(r.Context(), s.cfg)
		var buf bytes.Buffer
		if err := dashboardTmpl.Execute(&buf, data); err != nil {
			s.log.Error("could not render the dashboard", "err", err)
			http.Error(w, "could not render the dashboard: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if len(data.Errors) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = w.Write(buf.Bytes())
	})
}

type dashData struct {
	// Generated is when this process rendered the page, on its own clock
	// (shown as a time of day); Now is the database's clock then, which
	// every age on the page is measured from: the rows' timestamps are on
	// that clock, and the router's may be skewed from it.
	Generated     time.Time
	Now           time.Time
	Replica       string
	Refresh       int
	Errors        []string
	Providers     []ProviderView
	StatsWindow   string
	Conformance   confMatrix
	Jobs          []dashJob
	Counters      *store.Counters
	CounterWindow string
	CounterTiles  []tile
	Deliveries    *deliveriesView
	Hedge         *store.HedgeCost
	// ShowCost: Hedge's money tiles are shown (Config.Priced, or money was
	// recorded); ShowLatencyBought: its latency tile is (Config.KeepLosers).
	ShowCost, ShowLatencyBought bool

	// AttemptsPerJob is how many of a job's attempts, the last, are shown
	// (dashAttemptsPerJob).
	AttemptsPerJob int
}

type tile struct {
	Label string
	Value string // a count, or "–" when it could not be read
	Class string
}

type confMatrix struct {
	Status    string   // why it is not available, or ""
	Providers []string // columns
	Rows      []confRow
}

type confRow struct {
	Prompt string // name@version
	Cells  []*ConformanceCell
}

type dashJob struct {
	ID, Owner, Operation, State, Route string
	Created                            time.Time
	Span, Queued                       string
	Attempts                           []dashAttempt
	// Earlier is how many of the job's attempts, before those shown, the
	// page leaves out (dashAttemptsPerJob).
	Earlier int
	// Error says why the job failed without the job's error text, which can
	// quote the output or input (failureSummary).
	Error string
}

type dashAttempt struct {
	Seq                          int
	Provider, Role, State, Model string
	// Sent and Breaker are the model the attempt sent in place of its
	// target's own and the breaker that counted it (sentModels.of);
	// SentLabel says both, "" when it sent the target's own model.
	Sent, Breaker, SentLabel string
	Winner                   bool
	Left, Width              string // CSS percentages on the job's timeline
	StartOffset, Latency     string
	// Why is what ended a failed, invalid or unknown attempt, without values
	// (attemptWhy).
	Why string
}

// dashAttemptsPerJob is how many of a job's attempts, the last ones, the
// dashboard reads and shows: retries are not bounded in number, and a job
// with thousands of them must not make a page that reloads every few seconds
// megabytes long. The job's other attempts are counted ("N earlier attempts
// not shown"); `router jobs get` prints them all.
const dashAttemptsPerJob = 10

// dashboardData reads the page's sections — the database clock, the
// conformance results, the providers, the webhook deliveries, the recent
// jobs, the counters — at once, each within its own opsReadTimeout
// (readAll): a section whose read waits (its table locked by ALTER TABLE,
// VACUUM FULL or REINDEX) lists its error, and the others are shown.
func (s *Server) dashboardData(ctx context.Context, ops Config) *dashData {
	d := &dashData{Generated: s.now(), Replica: ops.Replica, Refresh: max(int(ops.DashboardRefresh.Seconds()), 1),
		StatsWindow: ops.StatsWindow.String(), CounterWindow: "last hour", AttemptsPerJob: dashAttemptsPerJob}
	var (
		now        time.Time
		nowErr     error
		conf       conformanceRead
		state      providerState
		deliveries deliveryReads
		jobs       []store.RecentJob
		jobsErr    error
		counts     counterReads
	)
	readAll(ctx,
		func(ctx context.Context) { now, nowErr = s.store.Now(ctx) },
		// One read of the conformance results, for the providers table and
		// the matrix both.
		func(ctx context.Context) { conf = readConformance(ctx, ops) },
		func(ctx context.Context) { state = s.readProviderState(ctx) },
		func(ctx context.Context) { deliveries = s.readDeliveries(ctx) },
		func(ctx context.Context) {
			jobs, jobsErr = s.store.RecentJobsCapped(ctx, ops.RecentJobs, dashAttemptsPerJob)
		},
		func(ctx context.Context) { counts = s.readCounters(ctx) })

	if nowErr != nil {
		// The ages are then on this process's clock, which may be skewed
		// from the database's: the error is listed on the page.
		d.Errors = append(d.Errors, "database clock (the ages shown are on this replica's clock): "+nowErr.Error())
		d.Now = d.Generated
	} else {
		d.Now = now
	}
	if reply, err := s.listProviders(conf, state); err != nil {
		d.Errors = append(d.Errors, "providers: "+err.Error())
	} else {
		d.Providers = reply.Providers
	}
	d.Conformance = conformanceMatrix(conf, ops)
	d.Deliveries = deliveries.view(d)
	if jobsErr != nil {
		d.Errors = append(d.Errors, "recent jobs: "+jobsErr.Error())
	} else {
		names := map[string]outputNames{}
		sent := newSentModels(ops)
		for _, j := range jobs {
			dj := timeline(j.Job, d.Now, s.outputNames(j.Job, names), sent)
			dj.Earlier = j.Earlier()
			if j.FirstAttemptAt != nil && dj.Earlier > 0 {
				// The shown attempts' axis starts at the first of them; the
				// time queued is until the job's very first attempt.
				dj.Queued = ""
				if q := j.FirstAttemptAt.Sub(j.CreatedAt); q > 0 {
					dj.Queued = fmtDur(q)
				}
			}
			d.Jobs = append(d.Jobs, dj)
		}
	}
	counts.show(d, ops)
	return d
}

func conformanceMatrix(conf conformanceRead, ops Config) confMatrix {
	if !conf.configured {
		return confMatrix{Status: "No conformance source is configured on this replica."}
	}
	if conf.err != nil {
		return confMatrix{Status: "Conformance results could not be read: " + conf.err.Error()}
	}
	cells := conf.cells
	m := confMatrix{Providers: append([]string(nil), ops.Providers...)}
	seen := map[string]bool{}
	for _, p := range m.Providers {
		seen[p] = true
	}
	byPrompt := map[string]map[string]*ConformanceCell{}
	for i := range cells {
		c := &cells[i]
		if !seen[c.Provider] {
			seen[c.Provider] = true
			m.Providers = append(m.Providers, c.Provider)
		}
		key := c.Prompt + "@" + c.PromptVersion
		if byPrompt[key] == nil {
			byPrompt[key] = map[string]*ConformanceCell{}
		}
		byPrompt[key][c.Provider] = c
	}
	keys := make([]string, 0, len(byPrompt))
	for k := range byPrompt {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		row := confRow{Prompt: k}
		for _, p := range m.Providers {
			row.Cells = append(row.Cells, byPrompt[k][p])
		}
		m.Rows = append(m.Rows, row)
	}
	if len(m.Rows) == 0 {
		m.Status = "No conformance run has been recorded yet: run `router conformance run`."
	}
	return m
}

// timeline lays a job's attempts out on one time axis, from the job's creation
// to its last event (or now, on the database's clock as the rows'
// timestamps are, while attempts are in flight). names are the
// property names the job's prompt declares (attemptWhyIn), nil when unknown.
// j.Attempts may be only the job's last ones (RecentJobsCapped): the axis
// then starts at the first of those. sent names the models attempts sent in
// place of their target's own.
func timeline(j *store.Job, now time.Time, names outputNames, sent sentModels) dashJob {
	dj := dashJob{ID: j.ID, Owner: j.Owner, Operation: j.Operation, State: j.State, Route: j.Route, Created: j.CreatedAt}
	// The axis starts at the first attempt (time before it is queueing, shown
	// apart), so the race itself is readable.
	t0 := j.CreatedAt
	if len(j.Attempts) > 0 {
		first := j.Attempts[0].CreatedAt
		for _, a := range j.Attempts {
			if a.CreatedAt.Before(first) {
				first = a.CreatedAt
			}
		}
		if first.After(t0) {
			dj.Queued = fmtDur(first.Sub(t0))
			t0 = first
		}
	}
	end := t0
	if j.FinishedAt != nil && j.FinishedAt.After(end) {
		end = *j.FinishedAt
	}
	for _, a := range j.Attempts {
		switch {
		case a.FinishedAt != nil:
			if a.FinishedAt.After(end) {
				end = *a.FinishedAt
			}
		case now.After(end):
			end = now
		}
	}
	span := end.Sub(t0)
	if span <= 0 {
		span = time.Millisecond
	}
	dj.Span = fmtDur(span)
	pos := func(t time.Time) float64 {
		return min(max(float64(t.Sub(t0))/float64(span)*100, 0), 100)
	}
	for _, a := range j.Attempts {
		start := a.CreatedAt
		if a.StartedAt != nil {
			start = *a.StartedAt
		}
		stop := now
		if a.FinishedAt != nil {
			stop = *a.FinishedAt
		}
		left := pos(start)
		width := max(pos(stop)-left, 0.8)
		if left+width > 100 {
			left = 100 - width
		}
		da := dashAttempt{Seq: a.Seq, Provider: a.Provider, Role: a.Role, State: a.State, Model: a.Model,
			Winner: j.CompletedBy != nil && *j.CompletedBy == a.ID,
			Left:   fmt.Sprintf("%.2f%%", left), Width: fmt.Sprintf("%.2f%%", width),
			StartOffset: "+" + fmtDur(start.Sub(t0)), Why: attemptWhyIn(&a, names)}
		da.Sent, da.Breaker = sent.of(a.Provider, a.Model)
		da.SentLabel = sentLabel(da.Sent, da.Breaker)
		switch {
		case a.LatencyMS != nil:
			da.Latency = fmtMS(float64(*a.LatencyMS))
		case a.FinishedAt == nil:
			da.Latency = fmtDur(now.Sub(start)) + " so far"
		}
		dj.Attempts = append(dj.Attempts, da)
	}
	dj.Error = failureSummary(j, dj.Attempts)
	return dj
}

// attemptWhy is attemptWhyIn for an attempt whose prompt is not known.
func attemptWhy(a *store.Attempt) string { return attemptWhyIn(a, nil) }

// maxWhy bounds what the page says about one attempt, in bytes.
const maxWhy = 200

// attemptWhyIn is what ended a failed, invalid or unknown attempt, without
// any value of the output or the provider's message: the error's kind and
// HTTP status, or the first contract rule the output broke and where — the
// path as shownPath leaves it, so without the output's own keys — in at most
// maxWhy bytes.
func attemptWhyIn(a *store.Attempt, names outputNames) string {
	switch a.State {
	case store.AttemptInvalid:
		var vs []struct {
			Rule string `json:"rule"`
			Path string `json:"path"`
		}
		if json.Unmarshal(a.ValidationErrors, &vs) != nil || len(vs) == 0 || vs[0].Rule == "" {
			return "output breaks the contract"
		}
		var more string
		if len(vs) > 1 {
			more = fmt.Sprintf(" (+%d more)", len(vs)-1)
		}
		s := "output breaks the contract: " + vs[0].Rule
		if p := shownPath(vs[0].Rule, vs[0].Path, names); p != "" {
			s += " at " + p
		}
		return capText(s, maxWhy-len(more)) + more
	case store.AttemptFailed, store.AttemptUnknown:
		var e struct {
			Kind   string `json:"kind"`
			Status int    `json:"status"`
		}
		if json.Unmarshal(a.Error, &e) != nil || e.Kind == "" {
			return a.State
		}
		if e.Status != 0 {
			return capText(fmt.Sprintf("%s (HTTP %d)", e.Kind, e.Status), maxWhy)
		}
		return capText(e.Kind, maxWhy)
	}
	return ""
}

// capText cuts s to at most n bytes, on a character boundary, ending it with
// "…" when it was cut.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const cut = "…"
	i := max(n-len(cut), 0)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + cut
}

func count(n int64) string { return strconv.FormatInt(n, 10) }

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func fmtMS(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.2fs", ms/1000)
	}
	return fmt.Sprintf("%.0fms", ms)
}

func fmtDur(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return d.Round(10 * time.Millisecond).String()
}

// clock is t's time of day in UTC, named: the API's times and `router jobs
// list` are in UTC, and an unnamed local time read beside them is off by the
// zone's offset.
func clock(t time.Time) string { return t.UTC().Format("15:04:05") + " UTC" }

// usd is a sum in dollars, to 4 decimals, or to the first two significant
// digits of a smaller sum (a cheap model's hour, a hedge loser's prompt:
// $0.000045), which 4 decimals would show as $0.0000 — money spent read as
// none. At most 10 decimals.
func usd(f float64) string {
	decimals := 4
	if f > 0 && f < 0.001 {
		decimals = min(int(-math.Floor(math.Log10(f)))+1, 10)
	}
	return fmt.Sprintf("$%.*f", decimals, f)
}

func ago(d time.Duration) string {
	switch {
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// shortID labels a job on the page by its id's last 8 hex digits: a job id
// is a UUIDv7, whose first group is the top of its creation time in ms, the
// same for every job of the same 65 s, and whose last group is random. The
// full id is the label's title.
func shortID(id string) string { return id[max(len(id)-8, 0):] }
