package telemetry

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The SDK's batch span processor drops a sampled span that ends while its
// queue (OTEL_BSP_MAX_QUEUE_SIZE spans) is full — a burst of jobs, a slow
// collector — and counts it only in a private counter it shows at debug
// level on OpenTelemetry's internal logger; its error handler hears nothing.
// dropLog counts what it drops with the SDK's public interfaces alone: the
// sampled spans handed to the processor (countingProcessor) and the spans it
// handed to the exporter (countingExporter). While the exporter is called the
// processor holds no span outside its queue but the batch being exported, so
// at that moment at least ended − exported − queue spans were dropped (all
// of them when the queue is full, as it is while spans are dropped); once the
// processor has drained its queue at shutdown, exactly ended − exported were.
// Drops are logged as a warning, at most once every errorLogEvery, and the
// rest, exact, at shutdown. The router never calls ForceFlush, whose export
// runs beside the processor's own.

// dropLog counts and logs the spans a batch span processor drops.
type dropLog struct {
	log   *slog.Logger
	queue int           // the processor's queue size (WithMaxQueueSize)
	every time.Duration // 0: every increase is logged
	now   func() time.Time

	ended    atomic.Int64 // sampled spans the processor's OnEnd returned from
	exported atomic.Int64 // spans handed to the exporter
	drained  atomic.Bool  // the processor exported its last batch (exporter shut down)

	mu     sync.Mutex
	known  int64     // drops known so far (the largest lower bound, or the exact count)
	logged int64     // drops logged so far
	last   time.Time // of the last line; zero before the first
}

const droppedMsg = "OpenTelemetry: traces may be lost: spans were dropped because the batch span processor's queue was full (a burst of spans, or a slow collector); " +
	"raise OTEL_BSP_MAX_QUEUE_SIZE or sample fewer traces (OTEL_TRACES_SAMPLER); further drops are logged at most once a minute"

func newDropLog(log *slog.Logger, queue int) *dropLog {
	return &dropLog{log: log, queue: queue, every: errorLogEvery, now: time.Now}
}

// batcher is the SDK's batch span processor exporting to exp, with d's queue
// size, its drops counted by d.
func (d *dropLog) batcher(exp sdktrace.SpanExporter, opts ...sdktrace.BatchSpanProcessorOption) sdktrace.SpanProcessor {
	opts = append([]sdktrace.BatchSpanProcessorOption{sdktrace.WithMaxQueueSize(d.queue)}, opts...)
	return countingProcessor{SpanProcessor: sdktrace.NewBatchSpanProcessor(countingExporter{SpanExporter: exp, d: d}, opts...), d: d}
}

// countingProcessor counts the sampled spans handed to the batch span
// processor, once it took (or dropped) each.
type countingProcessor struct {
	sdktrace.SpanProcessor
	d *dropLog
}

func (p countingProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	p.SpanProcessor.OnEnd(s)
	if s.SpanContext().IsSampled() {
		p.d.ended.Add(1)
	}
}

// countingExporter counts the spans the batch span processor exports.
type countingExporter struct {
	sdktrace.SpanExporter
	d *dropLog
}

func (e countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	exported := e.d.exported.Add(int64(len(spans)))
	e.d.observe(e.d.ended.Load()-exported-int64(e.d.queue), false)
	return e.SpanExporter.ExportSpans(ctx, spans)
}

// Shutdown is called by the batch span processor once it exported its last
// batch: from then on ended − exported is exact.
func (e countingExporter) Shutdown(ctx context.Context) error {
	e.d.drained.Store(true)
	return e.SpanExporter.Shutdown(ctx)
}

// observe records that at least dropped spans were dropped in all, and logs
// the drops not yet logged unless a line was written less than every ago
// (final: whatever the time).
func (d *dropLog) observe(dropped int64, final bool) {
	d.mu.Lock()
	if dropped > d.known {
		d.known = dropped
	}
	now := d.now()
	if d.known == d.logged || (!final && !d.last.IsZero() && now.Sub(d.last) < d.every) {
		d.mu.Unlock()
		return
	}
	n, total := d.known-d.logged, d.known
	d.logged, d.last = d.known, now
	d.mu.Unlock()
	d.log.Warn(droppedMsg, "dropped", n, "total_dropped", total, "queue_size", d.queue)
}

// shutdown logs the drops not yet logged once the processor has shut down:
// exactly, if it drained its queue (its exporter was shut down), else what is
// known.
func (d *dropLog) shutdown() {
	dropped := int64(0)
	if d.drained.Load() {
		dropped = d.ended.Load() - d.exported.Load()
	}
	d.observe(dropped, true)
}

// bspQueueSize is the batch span processor's queue size as the SDK reads
// OTEL_BSP_MAX_QUEUE_SIZE (an integer, spaces included, or its default;
// bspProblems refused one below 1).
func bspQueueSize(getenv func(string) string) int {
	for _, b := range bspVars {
		if b.key != "OTEL_BSP_MAX_QUEUE_SIZE" {
			continue
		}
		if n, err := strconv.Atoi(getenv(b.key)); err == nil && n >= b.min {
			return n
		}
		return b.def
	}
	return sdktrace.DefaultMaxQueueSize
}
