package config

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// MaxBodyBytesCap is the largest http.max_body_bytes accepted: a request body
// is held in memory whole, so a larger limit only lets one caller exhaust it.
const MaxBodyBytesCap = 1 << 30 // 1 GiB

// MinHeaderBytes and MaxHeaderBytesCap bound http.max_header_bytes: below
// 1 KiB an ordinary request (an API key, a traceparent, an Idempotency-Key)
// would not fit; above 1 MiB, Go's own default limit, headers are held in
// memory whole before anything checks them.
const (
	MinHeaderBytes    = 1 << 10 // 1 KiB
	MaxHeaderBytesCap = 1 << 20 // 1 MiB
)

// DefaultMaxHeaderBytes is http.max_header_bytes when it is not written.
const DefaultMaxHeaderBytes = 64 << 10 // 64 KiB

// MaxWebhookTimeout is the longest webhooks.timeout (webhook.MaxTimeout): River
// rescues a delivery still running 2×MaxWebhookTimeout + 1m after it started,
// taking it for one whose replica died, and sends it again. The rescue runs on
// whichever replica leads River, with its own settings, so the window is
// fixed from this bound; a try allowed longer could still be running then,
// and its event be sent twice at once.
const MaxWebhookTimeout = 2 * time.Minute

// MinLease is the shortest execution.lease and retention.leader_lease: both
// are renewed (and scanned) at a third of their length, in a database round
// trip that must finish well within the lease.
const MinLease = time.Second

// MaxLease is the longest execution.lease and retention.leader_lease: a dead
// replica's jobs (or leadership) wait a lease before another takes them over,
// and handover_wait is at least twice the lease, which a lease of centuries
// overflowed (to a negative: the check passed and the default became 2m).
const MaxLease = 24 * time.Hour

// DefaultConformanceRetention is retention.conformance_runs when it is not
// written: 90 days of nightly runs.
const DefaultConformanceRetention = 2160 * time.Hour

// MinConformanceRetention is the shortest retention.conformance_runs other
// than 0s (keep every run). A pass is withdrawn by a failing run that
// finished while it ran, and a run is recorded (started_at set) only when it
// ends: a failure deleted while a longer run was still going would no longer
// withdraw that run's pass once recorded. A day is longer than a run of the
// suite against one target and prompt version takes (rangeProblems' message
// says 24h).
const MinConformanceRetention = 24 * time.Hour

// Lower bounds of durations a unit slip (24m for 24h, 10ms for 10s) takes
// far below any sane value; each is judged with the reason it is the least.
const (
	// MinReadHeaderTimeout: a request's headers must arrive within
	// http.read_header_timeout, from a client's first byte on a possibly
	// slow network; below this even ordinary clients are cut off.
	MinReadHeaderTimeout = 100 * time.Millisecond
	// MinIdleTimeout: http.idle_timeout closes a keep-alive connection idle
	// this long; below a second a client reconnects between most requests.
	MinIdleTimeout = time.Second
	// MinIdempotencyRetention: idempotency.retention keeps a key bound
	// after its job ends; a client retrying later than that (a network
	// failure, a restarted worker) creates a second job.
	MinIdempotencyRetention = time.Hour
	// MinJobRetention: retention.jobs deletes a finished job (its
	// attempts, events and deliveries) this long after its key expired; a
	// unit slip (720m for 720h) would delete every tenant's history within
	// hours, with nothing to warn of it.
	MinJobRetention = time.Hour
	// MinConformanceMaxAge: conformance.max_age is how long a pass counts;
	// shorter than the time between two runs, gated targets fall out of
	// every gated route between runs.
	MinConformanceMaxAge = time.Hour
)

// MaxCacheTTL is the longest auth.cache_ttl: a replica that missed a key's
// revocation notification accepts the key until its cached lookup expires,
// and `router keys revoke` waits that long for every replica to refuse it, so
// a TTL of hours (5h written for 5s) leaves a revoked key working for hours.
const MaxCacheTTL = time.Hour

// unitSlip is what d, below minimum, was likely meant as when written in a
// unit a step too small (24m for 24h, 10ms for 10s), or "" when that
// reading is below minimum too.
func unitSlip(d, minimum time.Duration) string {
	switch {
	case d <= 0:
	case d%time.Minute == 0 && d < time.Hour && d/time.Minute*time.Hour >= minimum:
		return fmt.Sprintf("%dh", d/time.Minute)
	case d%time.Millisecond == 0 && d < time.Second && d/time.Millisecond*time.Second >= minimum:
		return fmt.Sprintf("%ds", d/time.Millisecond)
	}
	return ""
}

// shortDuration is d as a file would write it: 1h, not 1h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// twice is 2×d, saturating instead of overflowing.
func twice(d Duration) Duration {
	if d > math.MaxInt64/2 {
		return math.MaxInt64
	}
	return 2 * d
}

// rangeProblems checks every numeric setting a file can get wrong by sign or
// size, after defaults: a value the file left out already holds its default,
// so what is out of range here was written so. Each message names the setting
// and its allowed range.
func (c Config) rangeProblems() []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	positive := func(name string, d Duration) {
		if d <= 0 {
			add("%s (%s) must be a positive duration such as 30s (omit it for the default)", name, d.D())
		}
	}
	lease := func(name string, d Duration) {
		switch {
		case d < Duration(MinLease):
			add("%s (%s) must be at least %s: it is renewed at a third of its length, in a database round trip (omit it for the default)", name, d.D(), MinLease)
		case d > Duration(MaxLease):
			add("%s (%s) must be at most %s: a replica that dies holds what it leased until the lease runs out, so a longer one only delays the takeover (omit it for the default)", name, d.D(), MaxLease)
		}
	}
	least := func(name string, d Duration, minimum time.Duration, why, def string) {
		if d >= Duration(minimum) {
			return
		}
		slip := ""
		if s := unitSlip(d.D(), minimum); s != "" {
			slip = "; was " + s + " meant?"
		}
		add("%s (%s) must be at least %s: %s%s (omit it for the default, %s)", name, d.D(), shortDuration(minimum), why, slip, def)
	}
	if n := c.HTTP.MaxBodyBytes; n < 1 || n > MaxBodyBytesCap {
		add("http.max_body_bytes (%d) must be between 1 and %d (1 GiB; a body is held in memory whole); omit it for the default, 1048576 (1 MiB)", n, MaxBodyBytesCap)
	}
	if n := c.HTTP.MaxHeaderBytes; n < MinHeaderBytes || n > MaxHeaderBytesCap {
		add("http.max_header_bytes (%d) must be between %d (1 KiB) and %d (1 MiB; headers are held in memory whole); omit it for the default, 65536 (64 KiB)", n, MinHeaderBytes, MaxHeaderBytesCap)
	}
	if c.HTTP.DefaultWait < 0 {
		add("http.default_wait (%s) must be 0s (answer at once, the default) or a positive duration", c.HTTP.DefaultWait.D())
	}
	positive("http.max_wait", c.HTTP.MaxWait)
	// Prefer: wait and its Preference-Applied echo count whole seconds
	// (RFC 7240): a wait of 500ms was echoed "wait=0", which the docs say
	// means no preference.
	for _, w := range []struct {
		name string
		d    Duration
	}{{"http.default_wait", c.HTTP.DefaultWait}, {"http.max_wait", c.HTTP.MaxWait}} {
		if w.d > 0 && w.d%Duration(time.Second) != 0 {
			add("%s (%s) must be a whole number of seconds, such as %s: Prefer: wait and Preference-Applied count whole seconds",
				w.name, w.d.D(), (w.d.D() + time.Second - 1).Truncate(time.Second))
		}
	}
	least("http.read_header_timeout", c.HTTP.ReadHeaderTimeout, MinReadHeaderTimeout,
		"a request's headers must arrive within it, so a shorter one cuts off ordinary clients", "10s")
	positive("http.read_body_timeout", c.HTTP.ReadBodyTimeout)
	least("http.idle_timeout", c.HTTP.IdleTimeout, MinIdleTimeout,
		"an idle keep-alive connection is closed after it, so a shorter one makes clients reconnect between requests", "120s")
	positive("shutdown.drain", c.Shutdown.Drain)
	positive("shutdown.http", c.Shutdown.HTTP)
	least("idempotency.retention", c.Idempotency.Retention, MinIdempotencyRetention,
		"a key stays bound this long after its job ends, and a client retrying with it later creates a second job", "24h")
	least("conformance.max_age", c.Conformance.MaxAge, MinConformanceMaxAge,
		"a pass counts for this long, so a shorter one takes gated targets out of gated routes between conformance runs", "168h")
	lease("execution.lease", c.Execution.Lease)
	positive("execution.reconcile_after", c.Execution.ReconcileAfter)
	positive("execution.handover_wait", c.Execution.HandoverWait)
	positive("execution.retry.base", c.Execution.Retry.Base)
	positive("execution.retry.cap", c.Execution.Retry.Cap)
	positive("execution.retry.max_retry_after", c.Execution.Retry.MaxRetryAfter)
	positive("chat.wait", c.Chat.Wait)
	least("retention.jobs", c.Retention.Jobs, MinJobRetention,
		"a finished job, with its attempts and events, is deleted this long after its key expired", "720h")
	lease("retention.leader_lease", c.Retention.LeaderLease)
	if d := c.Retention.ConformanceRuns; d != nil && *d != 0 && *d < Duration(MinConformanceRetention) {
		add("retention.conformance_runs (%s) must be 0s (keep every run) or at least 24h: a failing run deleted while a longer run is still going "+
			"would not withdraw that run's pass when it is recorded (omit it for the default, 2160h: 90 days)", d.D())
	}
	positive("webhooks.timeout", c.Webhooks.Timeout)
	if c.Webhooks.Timeout > Duration(MaxWebhookTimeout) {
		add("webhooks.timeout (%s) must be at most %s: a delivery still running %s after it started is taken for one whose replica died "+
			"and sent again, so a longer try could be sent twice at once (omit it for the default, 10s)",
			c.Webhooks.Timeout.D(), MaxWebhookTimeout, 2*MaxWebhookTimeout+time.Minute)
	}
	positive("webhooks.backoff_base", c.Webhooks.BackoffBase)
	positive("webhooks.backoff_cap", c.Webhooks.BackoffCap)
	// The longest wait between two tries is bounded by the retry window: a
	// cap beyond it only puts the last try later than the window (and
	// retention keeps every event retry_for + backoff_cap), and a cap of
	// centuries overflowed the backoff's doubling into a negative wait, a
	// panic in River's retry policy that stopped the router.
	if c.Webhooks.RetryFor > 0 && c.Webhooks.BackoffCap > c.Webhooks.RetryFor {
		add("webhooks.backoff_cap (%s) must be at most webhooks.retry_for (%s): the longest wait between two tries of a delivery "+
			"cannot usefully exceed the time its event is retried for (omit it for the default, 1h)",
			c.Webhooks.BackoffCap.D(), c.Webhooks.RetryFor.D())
	}
	if c.Webhooks.MaxResponseBytes < 1 {
		add("webhooks.max_response_bytes (%d) must be 1 or more (omit it for the default, 65536)", c.Webhooks.MaxResponseBytes)
	}
	if w := c.Webhooks.Workers; w < 1 || w > 10000 {
		add("webhooks.workers (%d) must be between 1 and 10000 (omit it for the default, 100)", w)
	}
	// Beyond an out-of-range webhooks.workers, reported above, only a
	// bound below 1 is worth a message.
	if n, w := c.Webhooks.MaxInflightPerOwner, c.Webhooks.Workers; n < 1 || (n > w && w >= 1 && w <= 10000) {
		add("webhooks.max_inflight_per_owner (%d) must be between 1 and webhooks.workers (%d): one owner's deliveries in flight per replica "+
			"(omit it for the default, a quarter of webhooks.workers)", n, w)
	}
	if t := c.Auth.CacheTTL; t != nil && *t > Duration(MaxCacheTTL) {
		add("auth.cache_ttl (%s) must be at most %s: a replica that missed a key's revocation accepts the key until its cached lookup expires, "+
			"and `router keys revoke` waits this long (omit it for the default, 5s; 0s turns the cache off)", t.D(), MaxCacheTTL)
	}
	if _, err := c.Log.SlogLevel(); err != nil {
		add("%v", err)
	}
	for i, p := range c.Providers {
		where := fmt.Sprintf("providers[%d] (%s)", i, p.Name)
		positive(where+".timeout", p.Timeout)
		// Unset, these two are half of timeout at most: a timeout of a
		// nanosecond leaves them 0, which the adapters would read as "none".
		switch {
		case p.FirstByteTimeout > 0:
		case p.unstreamed():
			add("%s.first_byte_timeout (%s) must be a positive duration, at most timeout (%s); with stream: false it is timeout whatever is written below it "+
				"(the answer's first byte comes only with the whole answer), so leave it out", where, p.FirstByteTimeout.D(), p.Timeout.D())
		default:
			add("%s.first_byte_timeout (%s) must be a positive duration below timeout (%s); left out, it is half of timeout, at most 30s", where, p.FirstByteTimeout.D(), p.Timeout.D())
		}
		switch {
		case p.StreamIdleTimeout > 0:
		case p.unstreamed():
			add("%s.stream_idle_timeout (%s) must be a positive duration below timeout (%s); with stream: false it does not apply "+
				"(the answer comes whole, with no gaps between chunks to bound), so leave it out", where, p.StreamIdleTimeout.D(), p.Timeout.D())
		default:
			add("%s.stream_idle_timeout (%s) must be a positive duration below timeout (%s); left out, it is half of timeout, at most 15s", where, p.StreamIdleTimeout.D(), p.Timeout.D())
		}
		if p.ContextWindow < 1 {
			add("%s.context_window (%d) must be 1 or more tokens (omit it for the default, 128000)", where, p.ContextWindow)
		}
		where += ".breaker"
		b := p.Breaker
		if b.ConsecutiveFailures < 1 || int64(b.ConsecutiveFailures) > math.MaxUint32 {
			add("%s.consecutive_failures (%d) must be between 1 and %d (omit it for the default, 5)", where, b.ConsecutiveFailures, uint32(math.MaxUint32))
		}
		if b.OpenFor <= 0 {
			add("%s.open_for (%s) must be a positive duration such as 30s (omit it for the default)", where, b.OpenFor.D())
		}
		if b.HalfOpenProbes < 1 || int64(b.HalfOpenProbes) > math.MaxUint32 {
			add("%s.half_open_probes (%d) must be between 1 and %d (omit it for the default, 1)", where, b.HalfOpenProbes, uint32(math.MaxUint32))
		}
	}
	for _, name := range sortedRoutes(c.Routes) {
		if r := c.Routes[name]; r != nil {
			positive("routes."+name+".deadline", r.Deadline)
		}
	}
	return errs
}
