package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router jobs get` of a job not in the database says that an ended job is
// deleted by retention, and when, with this configuration's settings: the
// job asked for may have been. Found by review.
func TestJobsGetNotFoundNamesRetention(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	var code int
	_, errOut := captureOutput(t, func() {
		code = run(context.Background(), []string{"jobs", "get", "01a23b58-0d95-714d-b84d-99dabf56969c", "--config", cfg})
	})
	if code == 0 || !strings.Contains(errOut, "no job 01a23b58-0d95-714d-b84d-99dabf56969c in this database") ||
		!strings.Contains(errOut, "idempotency.retention plus retention.jobs") || !strings.Contains(errOut, "24h0m0s + 720h0m0s") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
