package metrics

import "github.com/prometheus/client_golang/prometheus"

// Webhooks counts this replica's webhook delivery tries by outcome
// (router_webhook_deliveries_total): it is the delivery worker's Observer
// (webhook.ServiceConfig.Observer). It is a prometheus.Collector: register it
// on the metrics' registry (Metrics.Registry).
type Webhooks struct {
	deliveries *prometheus.CounterVec
}

// WebhookOutcomes are the values of router_webhook_deliveries_total's outcome
// label (webhook.OutcomeDelivered, OutcomeFailed, OutcomeAbandoned).
var WebhookOutcomes = []string{"delivered", "failed", "abandoned"}

// NewWebhooks makes the delivery counter, each outcome at 0 (so that a rate
// or an increase of abandoned deliveries is defined before the first one).
func NewWebhooks() *Webhooks {
	w := &Webhooks{deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_webhook_deliveries_total",
		Help: "Webhook delivery tries recorded by this replica, by outcome: delivered; failed (to be retried); " +
			"abandoned (the failed try that gave up on its event, webhooks.retry_for old). Tries cut by the replica's shutdown are not counted."},
		[]string{"outcome"})}
	for _, o := range WebhookOutcomes {
		w.deliveries.WithLabelValues(o)
	}
	return w
}

// DeliveryTry implements webhook.Observer.
func (w *Webhooks) DeliveryTry(outcome string) { w.deliveries.WithLabelValues(outcome).Inc() }

// Describe implements prometheus.Collector.
func (w *Webhooks) Describe(ch chan<- *prometheus.Desc) { w.deliveries.Describe(ch) }

// Collect implements prometheus.Collector.
func (w *Webhooks) Collect(ch chan<- prometheus.Metric) { w.deliveries.Collect(ch) }
