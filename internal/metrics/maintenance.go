package metrics

import "github.com/prometheus/client_golang/prometheus"

// LeaderSource says whether this replica leads maintenance now
// (maintenance.Elector).
type LeaderSource interface{ IsLeader() bool }

// Maintenance shows the maintenance leader's work: whether this replica
// leads (router_maintenance_leader, read at scrape time), and what its
// retention passes did (router_retention_jobs_deleted_total,
// router_retention_conformance_runs_deleted_total,
// router_retention_pass_errors_total). It is the cleaner's Observer
// (maintenance.Cleaner.Observer). It is a prometheus.Collector: register it
// on the metrics' registry (Metrics.Registry).
type Maintenance struct {
	leader     prometheus.GaugeFunc
	deleted    prometheus.Counter
	confRuns   prometheus.Counter
	passErrors prometheus.Counter
}

// NewMaintenance makes the maintenance series; the counters are exposed at 0
// from the start, so that an increase of failed passes is defined before the
// first one.
func NewMaintenance(leader LeaderSource) *Maintenance {
	m := &Maintenance{
		leader: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "router_maintenance_leader",
			Help: "1 while this replica leads maintenance (recovery's lease expiry, orphan adoption and reconciliation; retention), else 0. Summed over the replicas it is 1; 0 means no replica leads."},
			func() float64 {
				if leader.IsLeader() {
					return 1
				}
				return 0
			}),
		deleted: prometheus.NewCounter(prometheus.CounterOpts{Name: "router_retention_jobs_deleted_total",
			Help: "Jobs past retention.jobs deleted by this replica's retention passes (with their attempts, events, deliveries and keys)."}),
		confRuns: prometheus.NewCounter(prometheus.CounterOpts{Name: "router_retention_conformance_runs_deleted_total",
			Help: "Conformance runs past retention.conformance_runs deleted by this replica's retention passes (never a run the gate or the operator views still read)."}),
		passErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "router_retention_pass_errors_total",
			Help: "Retention passes of this replica that failed: a batch of expired jobs or of old conformance runs, or the ending of removed webhooks past their window, could not be done (the log says why); the next pass tries again."}),
	}
	return m
}

// RetentionDeleted implements maintenance.Observer.
func (m *Maintenance) RetentionDeleted(n int) { m.deleted.Add(float64(n)) }

// ConformanceRunsDeleted implements maintenance.ConformanceObserver.
func (m *Maintenance) ConformanceRunsDeleted(n int) { m.confRuns.Add(float64(n)) }

// RetentionPassFailed implements maintenance.Observer.
func (m *Maintenance) RetentionPassFailed() { m.passErrors.Inc() }

// Describe implements prometheus.Collector.
func (m *Maintenance) Describe(ch chan<- *prometheus.Desc) {
	m.leader.Describe(ch)
	m.deleted.Describe(ch)
	m.confRuns.Describe(ch)
	m.passErrors.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *Maintenance) Collect(ch chan<- prometheus.Metric) {
	m.leader.Collect(ch)
	m.deleted.Collect(ch)
	m.confRuns.Collect(ch)
	m.passErrors.Collect(ch)
}
