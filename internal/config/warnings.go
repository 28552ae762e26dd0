package config

import "fmt"

// Warnings lists what the configuration allows but is likely a mistake, one
// sentence each that names the fix: unpriced targets (PriceWarnings), a drain
// shorter than a first-byte deadline (drainWarning) and targets a route's
// max_attempts leaves out (attemptWarnings). The server logs them at start.
func (c *Config) Warnings() []string {
	out := c.PriceWarnings()
	if w := c.drainWarning(); w != "" {
		out = append(out, w)
	}
	return append(out, c.attemptWarnings()...)
}

// drainWarning says when shutdown.drain is shorter than the first_byte_timeout
// of a provider some route uses (the longest such): an attempt sent just
// before a SIGTERM to that provider and still silent when the drain runs out
// is recorded unknown (kind shutdown), which SPEC §17 says a stop must not
// cause; and a hedge on it cannot start during the drain (its first-byte
// deadline would end after the drain). "" when the drain covers them all.
func (c *Config) drainWarning() string {
	var longest *Provider
	for _, name := range c.routeNames() {
		r := c.Routes[name]
		if r == nil {
			continue
		}
		for _, t := range c.RouteTargets(r) {
			if longest == nil || t.Provider.FirstByteTimeout > longest.FirstByteTimeout {
				longest = t.Provider
			}
		}
	}
	if longest == nil || c.Shutdown.Drain <= 0 || c.Shutdown.Drain >= longest.FirstByteTimeout {
		return ""
	}
	return fmt.Sprintf("shutdown.drain (%s) is shorter than provider %s's first_byte_timeout (%s): an attempt still waiting for its first byte "+
		"when a drain runs out is recorded unknown and its job waits for a resolution; set shutdown.drain to at least %s (or leave it out: the longest provider timeout)",
		c.Shutdown.Drain.D(), longest.Name, longest.FirstByteTimeout.D(), longest.FirstByteTimeout.D())
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
