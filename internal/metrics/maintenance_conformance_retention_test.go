package metrics_test

import (
	"testing"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/metrics"
)

// The cleaner finds the conformance counter by type assertion on its
// Observer (maintenance.ConformanceObserver): the wiring holds only while
// Maintenance implements it.
var _ maintenance.ConformanceObserver = (*metrics.Maintenance)(nil)

// router_retention_conformance_runs_deleted_total exists at 0 from the start
// and counts the conformance runs retention reports deleted.
func TestMaintenanceCountsDeletedConformanceRuns(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	mm := metrics.NewMaintenance(&leads{})
	m.Registry().MustRegister(mm)
	const name = "router_retention_conformance_runs_deleted_total"
	if v := value(t, scrape(t, m.Handler()), name, nil); v != 0 {
		t.Errorf("%s = %v at the start; want 0", name, v)
	}
	mm.ConformanceRunsDeleted(40)
	mm.ConformanceRunsDeleted(2)
	if v := value(t, scrape(t, m.Handler()), name, nil); v != 42 {
		t.Errorf("%s = %v; want 42", name, v)
	}
}
