package config

import (
	"strings"
	"testing"
)

// http.read_header_timeout, http.idle_timeout, idempotency.retention,
// retention.jobs and conformance.max_age have a least value: a unit slip (24m written for 24h,
// 1ms for 1s) was accepted as any positive duration. The refusal names the
// setting, the value written, the least value and the default; a value at
// the least is accepted.
func TestDurationMinimums(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, tc := range []struct{ written, want string }{
		{"http: {read_header_timeout: 1ms}\n", "http.read_header_timeout (1ms) must be at least 100ms: a request's headers must arrive within it, " +
			"so a shorter one cuts off ordinary clients; was 1s meant? (omit it for the default, 10s)"},
		{"http: {read_header_timeout: 99ms}\n", "http.read_header_timeout (99ms) must be at least 100ms"},
		{"http: {read_header_timeout: 0s}\n", "http.read_header_timeout (0s) must be at least 100ms"},
		{"http: {idle_timeout: 120ms}\n", "http.idle_timeout (120ms) must be at least 1s: an idle keep-alive connection is closed after it, " +
			"so a shorter one makes clients reconnect between requests; was 120s meant? (omit it for the default, 120s)"},
		{"http: {idle_timeout: -1s}\n", "http.idle_timeout (-1s) must be at least 1s: "},
		{"idempotency: {retention: 24m}\n", "idempotency.retention (24m0s) must be at least 1h: a key stays bound this long after its job ends, " +
			"and a client retrying with it later creates a second job; was 24h meant? (omit it for the default, 24h)"},
		{"idempotency: {retention: 59m59s}\n", "idempotency.retention (59m59s) must be at least 1h: "},
		{"conformance: {max_age: 24m}\n", "conformance.max_age (24m0s) must be at least 1h: a pass counts for this long, " +
			"so a shorter one takes gated targets out of gated routes between conformance runs; was 24h meant? (omit it for the default, 168h)"},
		{"retention: {jobs: 30m}\n", "retention.jobs (30m0s) must be at least 1h: a finished job, with its attempts and events, " +
			"is deleted this long after its key expired; was 30h meant? (omit it for the default, 720h)"},
		// 30s read as 30h would not be a slip of unit (s to m to h), so no guess is made.
		{"conformance: {max_age: 30s}\n", "conformance.max_age (30s) must be at least 1h: a pass counts for this long, " +
			"so a shorter one takes gated targets out of gated routes between conformance runs (omit it for the default, 168h)"},
	} {
		_, err := Parse([]byte(defaultsBase + tc.written))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: Parse error %v; want it to contain %q", tc.written, err, tc.want)
		}
	}
	for _, ok := range []string{
		"http: {read_header_timeout: 100ms, idle_timeout: 1s}\n",
		"idempotency: {retention: 1h}\nconformance: {max_age: 1h}\nretention: {jobs: 1h}\n",
		"http: {read_header_timeout: 10s, idle_timeout: 120s}\nidempotency: {retention: 24h}\nconformance: {max_age: 168h}\n",
	} {
		if _, err := Parse([]byte(defaultsBase + ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// retention.jobs from 1h to a day is accepted but warned of (more likely a
// unit slip than a choice: 720m for 720h deletes every job 12 h after its key
// expired); a day or more is not warned of.
func TestShortJobRetentionWarned(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for written, want := range map[string]string{
		"retention: {jobs: 720m}\n": "retention.jobs (12h) deletes every finished job, with its attempts and events, 12h after its key expired, " +
			"less than a day: if that is meant, leave it; otherwise correct it (the default is 720h; m is minutes: 720m is 12h)",
		"retention: {jobs: 2h}\n": "retention.jobs (2h) deletes every finished job, with its attempts and events, 2h after its key expired, " +
			"less than a day: if that is meant",
		"retention: {jobs: 24h}\n": "",
	} {
		c, err := Parse([]byte(defaultsBase + written))
		if err != nil {
			t.Fatalf("%q: %v", written, err)
		}
		var got string
		for _, w := range c.Warnings() {
			if strings.Contains(w, "retention.jobs") {
				got = w
			}
		}
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("%q: warning %q; want one containing %q", written, got, want)
		}
	}
}
