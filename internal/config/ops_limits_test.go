package config

import (
	"strings"
	"testing"
	"time"
)

func TestOpsListenOffLoopbackNeedsAKey(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.OpsListen != "127.0.0.1:9090" || c.Shutdown.HTTP.D() != 10*time.Second || c.Shutdown.Drain.D() != 60*time.Second {
		t.Fatalf("defaults: ops_listen %q shutdown %+v", c.OpsListen, c.Shutdown)
	}
	for _, addr := range []string{"0.0.0.0:9090", ":9090", "10.1.2.3:9090", "ops.internal:9090"} {
		_, err := Parse([]byte("ops_listen: \"" + addr + "\"\n"))
		if err == nil || !strings.Contains(err.Error(), "ops_key_env") {
			t.Errorf("%s without a key: %v", addr, err)
		}
		if _, err := Parse([]byte("ops_listen: \"" + addr + "\"\nops_key_env: OPS_KEY\n")); err != nil {
			t.Errorf("%s with a key: %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:9090", "localhost:9090"} {
		if _, err := Parse([]byte("ops_listen: \"" + addr + "\"\n")); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

func TestShutdownDrainDefaultsToLongestProviderTimeout(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(`providers:
  - {name: a, type: scripted, timeout: 20s}
  - {name: b, type: scripted, timeout: 90s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Shutdown.Drain.D() != 90*time.Second {
		t.Fatalf("drain %s", c.Shutdown.Drain.D())
	}
}

func TestLimitsOverrideFieldByField(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(`limits: {max_live_jobs: 10, requests_per_second: 5, burst: 8}
api_keys:
  - {owner: acme, key_env: A, limits: {max_live_jobs: 0}}
  - {owner: globex, key_env: G}
`))
	if err != nil {
		t.Fatal(err)
	}
	acme := c.Limits.Over(c.APIKeys[0].Limits)
	if *acme.MaxLiveJobs != 0 || *acme.RequestsPerSecond != 5 || *acme.Burst != 8 {
		t.Fatalf("acme %+v", acme)
	}
	globex := c.Limits.Over(c.APIKeys[1].Limits)
	if *globex.MaxLiveJobs != 10 {
		t.Fatalf("globex %+v", globex)
	}
	_, err = Parse([]byte(`limits: {max_live_jobs: -1}
api_keys:
  - {owner: acme, key_env: A, limits: {max_live_jobs: 1}}
  - {owner: acme, key_env: B, limits: {max_live_jobs: 2}}
`))
	if err == nil || !strings.Contains(err.Error(), "limits.max_live_jobs must be 0") || !strings.Contains(err.Error(), "owner acme has another key with different limits") {
		t.Fatalf("invalid limits: %v", err)
	}
}
