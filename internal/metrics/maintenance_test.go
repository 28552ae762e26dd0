package metrics_test

import (
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/metrics"
)

type leads struct{ atomic.Bool }

func (l *leads) IsLeader() bool { return l.Load() }

// router_maintenance_leader says, at each scrape, whether this replica leads
// maintenance; the retention counters exist at 0 from the start and count
// what the cleaner reports.
func TestMaintenanceSeries(t *testing.T) {
	l := &leads{}
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	mm := metrics.NewMaintenance(l)
	m.Registry().MustRegister(mm)
	for name, want := range map[string]float64{
		"router_maintenance_leader":           0,
		"router_retention_jobs_deleted_total": 0,
		"router_retention_pass_errors_total":  0,
	} {
		if v := value(t, scrape(t, m.Handler()), name, nil); v != want {
			t.Errorf("%s = %v at the start; want %v", name, v, want)
		}
	}
	l.Store(true)
	mm.RetentionDeleted(100)
	mm.RetentionDeleted(7)
	mm.RetentionPassFailed()
	fams := scrape(t, m.Handler())
	for name, want := range map[string]float64{
		"router_maintenance_leader":           1,
		"router_retention_jobs_deleted_total": 107,
		"router_retention_pass_errors_total":  1,
	} {
		if v := value(t, fams, name, nil); v != want {
			t.Errorf("%s = %v; want %v", name, v, want)
		}
	}
}
