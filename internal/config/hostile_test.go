package config

import (
	"strings"
	"testing"
	"time"
)

func TestHTTPTimeoutsAndResponseBound(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(`
http: {read_header_timeout: 2s, read_body_timeout: 5s, idle_timeout: 1m}
providers:
  - {name: a, type: openai, base_url: "http://x/v1", model: m, max_response_bytes: 1024}
  - {name: b, type: scripted}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP.ReadHeaderTimeout.D() != 2*time.Second || c.HTTP.ReadBodyTimeout.D() != 5*time.Second || c.HTTP.IdleTimeout.D() != time.Minute {
		t.Fatalf("http timeouts %+v", c.HTTP)
	}
	if c.Providers[0].MaxResponseBytes != 1024 || c.Providers[1].MaxResponseBytes != 8<<20 {
		t.Fatalf("max_response_bytes %d, %d; want 1024 and the 8 MiB default", c.Providers[0].MaxResponseBytes, c.Providers[1].MaxResponseBytes)
	}
	_, err = Parse([]byte(`
http: {idle_timeout: -1s}
providers:
  - {name: a, type: scripted, max_response_bytes: -5}
`))
	if err == nil || !strings.Contains(err.Error(), "max_response_bytes must be positive") || !strings.Contains(err.Error(), "http.idle_timeout") {
		t.Fatalf("negative bounds: %v", err)
	}
}
