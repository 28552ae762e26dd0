package config

import (
	"strings"
	"testing"
	"time"
)

// mustRefuse parses y and checks that the one error names every want.
func mustRefuse(t *testing.T, y string, wants ...string) {
	t.Helper()
	_, err := Parse([]byte(y))
	if err == nil {
		t.Fatalf("accepted:\n%s", y)
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

// Every out-of-range value is reported in the same message as an unknown
// field (SPEC §15), each naming its setting and the allowed range.
func TestOutOfRangeSettingsAllInOneMessage(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, `
listne: 127.0.0.1:1
http: {max_body_bytes: -1, default_wait: -1s, max_wait: -1s}
idempotency: {retention: -1h}
conformance: {max_age: -1h}
execution: {lease: 2ns, reconcile_after: -1s, handover_wait: -1s, retry: {base: -1ms, cap: -1s, max_retry_after: -1s}}
chat: {wait: -5s}
retention: {jobs: -1h, leader_lease: 10ms}
webhooks: {timeout: -1s, backoff_base: -1s, backoff_cap: -1s, max_response_bytes: -1, workers: -1}
log: {level: verbose}
providers:
  - name: a
    type: scripted
    breaker: {consecutive_failures: 4294967296, open_for: -1s, half_open_probes: -1}
  - name: b
    type: scripted
    breaker: {consecutive_failures: -1, half_open_probes: 4294967296}
`,
		"listne is not a known setting",
		"http.max_body_bytes (-1) must be between 1 and 1073741824",
		"http.default_wait (-1s) must be 0s",
		"http.max_wait (-1s) must be a positive duration",
		"idempotency.retention (-1h0m0s) must be at least 1h",
		"conformance.max_age (-1h0m0s) must be at least 1h",
		"execution.lease (2ns) must be at least 1s",
		"execution.reconcile_after (-1s) must be a positive duration",
		"execution.handover_wait (-1s) must be a positive duration",
		"execution.retry.base (-1ms) must be a positive duration",
		"execution.retry.cap (-1s)",
		"execution.retry.max_retry_after (-1s)",
		"chat.wait (-5s) must be a positive duration",
		"retention.jobs (-1h0m0s) must be at least 1h",
		"retention.leader_lease (10ms) must be at least 1s",
		"webhooks.timeout (-1s)", "webhooks.backoff_base (-1s)", "webhooks.backoff_cap (-1s)",
		"webhooks.max_response_bytes (-1) must be 1 or more",
		"webhooks.workers (-1) must be between 1 and 10000",
		`log.level: "verbose" is not debug, info, warn or error`,
		"providers[0] (a).breaker.consecutive_failures (4294967296) must be between 1 and 4294967295",
		"providers[0] (a).breaker.open_for (-1s) must be a positive duration",
		"providers[0] (a).breaker.half_open_probes (-1) must be between 1 and 4294967295",
		"providers[1] (b).breaker.consecutive_failures (-1) must be between 1",
		"providers[1] (b).breaker.half_open_probes (4294967296) must be between 1",
	)
}

func TestBodyLimitBounds(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	// max+1 of the largest int64 wraps negative: every body would be dropped.
	mustRefuse(t, "http: {max_body_bytes: 9223372036854775807}\n", "http.max_body_bytes (9223372036854775807) must be between 1 and 1073741824")
	mustRefuse(t, "http: {max_body_bytes: 1073741825}\n", "http.max_body_bytes")
	c, err := Parse([]byte("http: {max_body_bytes: 1073741824}\nlog: {level: WARN}\n"))
	if err != nil || c.HTTP.MaxBodyBytes != 1<<30 {
		t.Fatalf("the largest allowed body limit and an upper-case level: %v", err)
	}
}

// execution.handover_wait must leave the replicas that are not the recovery
// leader time to adopt a job (a lease) before the leader fails it; unset, it
// is 2m or twice the lease, whichever is longer.
func TestHandoverWaitAtLeastTwoLeases(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, "execution: {lease: 30s, handover_wait: 50s}\n",
		"execution.handover_wait (50s) is shorter than twice execution.lease (30s)", "set it to 1m0s or more")
	c, err := Parse([]byte("execution: {lease: 2m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Execution.HandoverWait.D() != 4*time.Minute {
		t.Fatalf("handover_wait %s with a 2m lease, want 4m (twice the lease)", c.Execution.HandoverWait.D())
	}
}

// A database_url that names no database is refused at load, saying what
// forms are meant — a misspelt `embedded` with a suggestion — and without
// repeating a value that may hold a password.
func TestDatabaseURLThatNamesNoDatabase(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, "database_url: embeded\n", `database_url "embeded": did you mean "embedded"`)
	mustRefuse(t, "database_url: Embedded\n", `did you mean "embedded"`)
	_, err := Parse([]byte("database_url: admin:s3cret@db.internal/router\n"))
	if err == nil || !strings.Contains(err.Error(), "is not a PostgreSQL URL") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("a URL without its scheme: %v; want it refused without repeating the password", err)
	}
	for _, ok := range []string{"embedded", "postgres://u@h/db", "postgresql:///db?host=/tmp", "host=localhost dbname=router"} {
		if _, err := Parse([]byte("database_url: \"" + ok + "\"\n")); err != nil {
			t.Errorf("database_url %q refused: %v", ok, err)
		}
	}
}

func TestSmallestLeasesAccepted(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte("execution: {lease: 1s}\nretention: {leader_lease: 1s}\n"))
	if err != nil || c.Execution.Lease.D() != MinLease || c.Chat.Wait.D().Minutes() != 5 {
		t.Fatalf("1s leases (and the chat.wait default): %v", err)
	}
}

// One bearer key listed for two entries would authenticate as only one.
func TestDuplicateKeyEnvRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, `
api_keys:
  - {owner: acme, key_env: SHARED_KEY}
  - {owner: globex, key_env: SHARED_KEY}
`, "api_keys[1].key_env: SHARED_KEY is also the key_env of api_keys[0] (owner acme)", "own environment variable")
	if _, err := Parse([]byte("api_keys:\n  - {owner: acme, key_env: A}\n  - {owner: acme, key_env: B}\n")); err != nil {
		t.Fatalf("two keys of one owner: %v", err)
	}
}
