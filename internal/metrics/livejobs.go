package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// LiveJobSource counts the database's jobs that are not terminal, by state
// (store.Store).
type LiveJobSource interface {
	LiveJobCounts(ctx context.Context) (map[string]int64, error)
}

// liveJobCollector reads the live jobs' counts at scrape time.
type liveJobCollector struct{ src LiveJobSource }

var (
	liveJobsDesc = prometheus.NewDesc("router_jobs_live",
		"Jobs pending, running or unknown in the database, by state (all replicas' and owners'; every replica reports the same count: take max, not sum). Unknown jobs wait for a resolution and never expire.",
		[]string{"state"}, nil)
	liveJobsUpDesc = prometheus.NewDesc("router_jobs_live_scrape_ok",
		"1 when the live jobs could be counted in the database at this scrape.", nil, nil)
)

func (c *liveJobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- liveJobsDesc
	ch <- liveJobsUpDesc
}

func (c *liveJobCollector) Collect(ch chan<- prometheus.Metric) {
	var counts map[string]int64
	if !readAtScrape(ch, liveJobsUpDesc, func(ctx context.Context) (err error) {
		counts, err = c.src.LiveJobCounts(ctx)
		return err
	}) {
		return
	}
	for state, n := range counts {
		ch <- prometheus.MustNewConstMetric(liveJobsDesc, prometheus.GaugeValue, float64(n), state)
	}
}
