package server_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Nothing on the operator surface says which replica leads maintenance
// (recovery's lease expiry, orphan adoption, reconciliation, retention) or
// whether retention deletes anything: a fleet where no replica leads (every
// renewal failing), or whose retention pass fails every minute, looks healthy
// on /metrics; only the logs tell. A lone replica leads from its start
// (startLifecycle's first Once), so its /metrics should say so, and retention's
// counters should exist at 0.
func TestMetricsSayWhetherThisReplicaLeadsAndWhatRetentionDid(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := newConfig(t, db, newFakeLLM(t).srv.URL, "")
	srv, err := server.New(context.Background(), cfg, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ops := httptest.NewServer(srv.OpsHandler)
	defer ops.Close()
	_, m := get(t, ops.URL+"/metrics", "")
	for _, series := range []string{
		"router_maintenance_leader 1",
		"router_retention_jobs_deleted_total 0",
		"router_retention_pass_errors_total 0",
	} {
		if !strings.Contains(m, series) {
			t.Errorf("/metrics has no %s", series)
		}
	}
}
