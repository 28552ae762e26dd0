package race_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
)

// endedSpans signals each span name as its span ends.
type endedSpans struct {
	sdktrace.SpanProcessor
	name string
	once sync.Once
	done chan struct{}
}

func (e *endedSpans) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.Name() == e.name {
		e.once.Do(func() { close(e.done) })
	}
}

// A job span's end reads the job's state; that read is bounded like the
// run's other writes on its way out, so a database that stalls it (a
// migration's lock on jobs, a hung connection) cannot keep the span — and a
// pool connection — past a shutdown that gave up on the run. It waited
// without bound, the span never ended until the lock went. Found by review.
func TestJobSpanEndsWhenStopGivesUpOnAStalledDatabase(t *testing.T) {
	ended := &endedSpans{SpanProcessor: sdktrace.NewSimpleSpanProcessor(nopExporter{}), name: "router.job triage", done: make(chan struct{})}
	before := otel.GetTracerProvider()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(ended))
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(before); _ = tp.Shutdown(context.Background()) })

	var once sync.Once
	called := make(chan struct{})
	b := racetest.New(t, racetest.Options{StopGrace: 50 * time.Millisecond, Providers: []racetest.Provider{{Name: "primary",
		Respond: func(int, *providers.Request) providers.Step {
			once.Do(func() { close(called) })
			return providers.Step{Hang: true}
		}}}})
	b.Submit(t)
	<-called

	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, b.DB.Pool.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // lets the stalled statements go at the end
	if _, err := tx.Exec(ctx, `LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	cut, cancel := context.WithCancel(ctx)
	cancel()
	b.Runner.Stop(cut) // gives up on the run, whose writes wait on the lock

	select {
	case <-ended.done:
	case <-time.After(time.Minute):
		t.Fatal("the job's span had not ended a minute after Stop gave up on its run (its state read waits on the lock)")
	}
}

// nopExporter drops spans.
type nopExporter struct{}

func (nopExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (nopExporter) Shutdown(context.Context) error                             { return nil }
