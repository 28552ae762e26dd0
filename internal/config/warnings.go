package config

import (
	"fmt"
	"time"
)

// Warnings lists what the configuration allows but is likely a mistake, one
// sentence each that names the fix: unpriced targets (PriceWarnings), routes
// mixing priced and unpriced targets (PriceMixWarnings), a drain
// shorter than a first-byte deadline or a timeout (drainWarnings) and targets
// a route's max_attempts leaves out (attemptWarnings), a retention.jobs
// shorter than a day (jobRetentionWarnings) and a first_byte_timeout
// that stream: false leaves without effect (unstreamedFirstByteWarnings). The
// server logs them at start.
func (c *Config) Warnings() []string {
	out := c.PriceWarnings()
	out = append(out, c.PriceMixWarnings()...)
	out = append(out, c.drainWarnings()...)
	out = append(out, c.attemptWarnings()...)
	out = append(out, c.jobRetentionWarnings()...)
	return append(out, c.unstreamedFirstByteWarnings()...)
}

// shortJobRetention is the retention.jobs below which the start warns:
// accepted (from MinJobRetention on), but shorter than a day it is more
// likely a unit slip (720m for 720h) than a choice, and what it deletes —
// every tenant's finished jobs, attempts and events — cannot be brought back.
const shortJobRetention = 24 * time.Hour

// jobRetentionWarnings says when retention.jobs is shorter than a day.
func (c *Config) jobRetentionWarnings() []string {
	d := c.Retention.Jobs.D()
	if d >= shortJobRetention || d < MinJobRetention {
		return nil
	}
	return []string{fmt.Sprintf("retention.jobs (%s) deletes every finished job, with its attempts and events, %s after its key expired, "+
		"less than a day: if that is meant, leave it; otherwise correct it (the default is 720h; m is minutes: 720m is 12h)", shortDuration(d), shortDuration(d))}
}

// unstreamedFirstByteWarnings names each provider with stream: false whose
// first_byte_timeout was written below its timeout: WithDefaults raised it to
// the timeout (the answer's first byte comes only with the whole answer, so
// the adapters bound that wait by timeout alone). Refusing it would break
// files written before; raising it silently hid that a value meant to fail
// over fast from a hanging provider (first_byte_timeout: 10s) now waits the
// whole timeout.
func (c *Config) unstreamedFirstByteWarnings() []string {
	var out []string
	for i, p := range c.Providers {
		if p.firstByteRaised <= 0 {
			continue
		}
		out = append(out, fmt.Sprintf("provider %s's first_byte_timeout (%s) has no effect with stream: false: the answer's first byte comes only with the whole answer, "+
			"so only its timeout (%s) bounds the wait, and first_byte_timeout is taken as %s (hedging, the drain and the breaker count it so); "+
			"to fail over sooner from a provider that does not answer, lower providers[%d].timeout to the longest wait you accept for a whole answer "+
			"(or set stream: true, where first_byte_timeout applies); otherwise leave first_byte_timeout out",
			p.Name, p.firstByteRaised.D(), p.Timeout.D(), p.Timeout.D(), i))
	}
	return out
}

// drainWarnings says when shutdown.drain is shorter than the
// first_byte_timeout of a provider some route uses (the longest such): an
// attempt sent just before a SIGTERM to that provider and still silent when
// the drain runs out is recorded unknown (kind shutdown), which SPEC §17
// says a stop must not cause; and a hedge on it cannot start during the
// drain (its first-byte deadline would end after the drain). And when it is
// shorter than the timeout of a provider some route uses (the longest such):
// an answer still streaming when the drain runs out is cut, recorded failed
// (kind shutdown), and sent again by the replica that adopts the job — one
// more of its max_attempts, and the provider paid for the cut answer too.
// The first implies the second (first_byte_timeout is below timeout); each
// names its own fix. None when the drain covers them all.
func (c *Config) drainWarnings() []string {
	var firstByte, whole *Provider // the used providers with the longest first_byte_timeout, timeout
	for _, name := range c.routeNames() {
		r := c.Routes[name]
		if r == nil {
			continue
		}
		for _, t := range c.RouteTargets(r) {
			if firstByte == nil || t.Provider.FirstByteTimeout > firstByte.FirstByteTimeout {
				firstByte = t.Provider
			}
			if whole == nil || t.Provider.Timeout > whole.Timeout {
				whole = t.Provider
			}
		}
	}
	if firstByte == nil || c.Shutdown.Drain <= 0 {
		return nil
	}
	var out []string
	if c.Shutdown.Drain < firstByte.FirstByteTimeout {
		out = append(out, fmt.Sprintf("shutdown.drain (%s) is shorter than provider %s's first_byte_timeout (%s): an attempt still waiting for its first byte "+
			"when a drain runs out is recorded unknown and its job waits for a resolution; set shutdown.drain to at least %s (or leave it out: the longest provider timeout)",
			c.Shutdown.Drain.D(), firstByte.Name, firstByte.FirstByteTimeout.D(), firstByte.FirstByteTimeout.D()))
	}
	if c.Shutdown.Drain < whole.Timeout {
		out = append(out, fmt.Sprintf("shutdown.drain (%s) is shorter than provider %s's timeout (%s): an answer still streaming when a drain runs out is cut "+
			"(its attempt recorded failed, kind shutdown) and sent again by the replica that adopts the job: one more of the route's max_attempts, "+
			"and the provider is paid for the cut answer as well as the new one; set shutdown.drain to at least %s (or leave it out: the longest provider timeout) to let such answers finish",
			c.Shutdown.Drain.D(), whole.Name, whole.Timeout.D(), whole.Timeout.D()))
	}
	return out
}

// attemptWarnings names each route with more targets than max_attempts: a job
// makes at most max_attempts attempts, so its last targets are reached only
// when earlier ones are skipped (a breaker open, the conformance gate, a
// context window too small) — refusing the route would break a deliberate
// long list of fallbacks.
func (c *Config) attemptWarnings() []string {
	var out []string
	for _, name := range c.routeNames() {
		r := c.Routes[name]
		if r == nil || r.MaxAttempts <= 0 {
			continue
		}
		if n := len(c.RouteTargets(r)); n > r.MaxAttempts {
			out = append(out, fmt.Sprintf("route %s lists %d targets but max_attempts is %d: a job makes at most %d attempts, so its last %d targets are tried only "+
				"when earlier ones are skipped (breaker open, conformance gate, context window); set routes.%s.max_attempts to at least %d to let every target be tried",
				name, n, r.MaxAttempts, r.MaxAttempts, n-r.MaxAttempts, name, n))
		}
	}
	return out
}
