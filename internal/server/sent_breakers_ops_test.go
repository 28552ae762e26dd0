package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The breaker of a model a route's `models` sends in place of a target's own
// (provider × model sent) is shown by /v1/providers and /metrics beside the
// targets' own, under the name of the target that would serve that model.
// Found by review (HIGH 1).
func TestOperatorSurfaceShowsTheBreakersOfModelsSent(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := newConfig(t, db, newFakeLLM(t).srv.URL, "")
	cfg.Routes["default"].Models = []string{"alias"}
	srv, err := server.New(context.Background(), cfg, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ops := httptest.NewServer(srv.OpsHandler)
	defer ops.Close()
	status, body := get(t, ops.URL+"/v1/providers", "")
	if status != http.StatusOK {
		t.Fatalf("/v1/providers: %d %s", status, body)
	}
	var reply struct {
		Providers []struct {
			Name     string `json:"name"`
			Eligible bool   `json:"eligible"`
		} `json:"providers"`
	}
	if err := json.Unmarshal([]byte(body), &reply); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range reply.Providers {
		names = append(names, p.Name)
		if !p.Eligible {
			t.Errorf("%s is not eligible on a fresh replica: %s", p.Name, body)
		}
	}
	if !slices.Equal(names, []string{"llm", "llm/alias"}) {
		t.Errorf("/v1/providers lists %v, want the target llm and the breaker of alias at its provider, llm/alias", names)
	}
	if _, m := get(t, ops.URL+"/metrics", ""); !strings.Contains(m, `router_breaker_state{provider="llm/alias",state="closed"} 1`) {
		t.Errorf("/metrics has no closed breaker state for llm/alias")
	}
}
