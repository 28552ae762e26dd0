package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// blockingExporter holds its first ExportSpans until release is closed,
// saying on entered that it is there; it counts the spans it was handed.
type blockingExporter struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	spans   int
}

func (e *blockingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	e.spans += len(spans)
	e.mu.Unlock()
	e.once.Do(func() {
		close(e.entered)
		<-e.release
	})
	return nil
}

func (*blockingExporter) Shutdown(context.Context) error { return nil }

// The batch span processor drops every sampled span that ends while its
// queue is full, and tells no one. Here its exporter is held on its first
// batch (2 spans) while 4+5 more end with a queue of 4: 5 are dropped,
// exactly, and the router's log says so — part of it (a lower bound) as
// soon as the next batch is exported, the rest, exact, at shutdown, without
// waiting for the minute between lines to pass.
func TestSpansDroppedOnAFullQueueAreCountedExactly(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil))
	const queue, batch, dropped = 4, 2, 5
	d := newDropLog(log, queue)
	exp := &blockingExporter{entered: make(chan struct{}), release: make(chan struct{})}
	// No timer-driven export: only a full batch is exported.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(d.batcher(exp, sdktrace.WithMaxExportBatchSize(batch), sdktrace.WithBatchTimeout(time.Hour))))
	tracer := tp.Tracer("test")
	end := func(n int) {
		for i := 0; i < n; i++ {
			_, span := tracer.Start(context.Background(), "span")
			span.End()
		}
	}
	end(batch)
	<-exp.entered // the processor is exporting the first batch: its queue is empty, and nothing takes from it
	end(queue + dropped)
	close(exp.release)
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	d.shutdown()

	exp.mu.Lock()
	exported := exp.spans
	exp.mu.Unlock()
	if exported != batch+queue {
		t.Fatalf("the exporter got %d spans; want %d (the case is wrong)", exported, batch+queue)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	var sum, total int
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, line := range lines {
		var rec struct {
			Msg          string `json:"msg"`
			Dropped      int    `json:"dropped"`
			TotalDropped int    `json:"total_dropped"`
			QueueSize    int    `json:"queue_size"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if !strings.Contains(rec.Msg, "OTEL_BSP_MAX_QUEUE_SIZE") || rec.QueueSize != queue {
			t.Errorf("line %q: want it to name OTEL_BSP_MAX_QUEUE_SIZE and queue_size %d", line, queue)
		}
		sum += rec.Dropped
		total = rec.TotalDropped
	}
	if sum != dropped || total != dropped {
		t.Errorf("logged %d dropped spans (total_dropped %d); want %d:\n%s", sum, total, dropped, out)
	}
	// Rate limit: the export after the release saw at least 3 dropped (5+4+2
	// ended, 4 exported, queue 4) and logged them; the 2 more known at
	// shutdown were logged then, within the minute.
	if len(lines) != 2 {
		t.Errorf("%d lines; want 2 (the lower bound while exporting, the exact rest at shutdown):\n%s", len(lines), out)
	}
}

// Within a minute of a line, a larger count waits for the next line, and
// shutdown logs what is left whatever the time.
func TestDropLogRateLimited(t *testing.T) {
	var buf bytes.Buffer
	d := newDropLog(slog.New(slog.NewJSONHandler(&buf, nil)), 8)
	now := time.Unix(1000, 0)
	d.now = func() time.Time { return now }
	d.observe(-3, false) // a lower bound below 0: nothing known
	d.observe(10, false)
	now = now.Add(time.Second)
	d.observe(15, false)
	d.observe(12, false) // a smaller bound changes nothing
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Fatalf("%d lines within a minute; want 1:\n%s", n, buf.String())
	}
	now = now.Add(time.Minute)
	d.observe(16, false)
	if !strings.Contains(buf.String(), `"dropped":6,"total_dropped":16`) {
		t.Fatalf("after a minute: %s; want the 6 since the last line, 16 in all", buf.String())
	}
	d.shutdown() // not drained: nothing new known
	if n := strings.Count(buf.String(), "\n"); n != 2 {
		t.Fatalf("%d lines; want 2:\n%s", n, buf.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
