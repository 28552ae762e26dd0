package race_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
)

// An output that breaks the contract stays out of traces, as it stays out of
// the log line: the attempt span's status names the rule and the path, not
// the values a violation's message quotes (tenant data, of any size; a
// span's status, unlike its attributes, is not cut by the SDK). Found by
// review.
func TestInvalidOutputStaysOutOfTheSpans(t *testing.T) {
	before := otel.GetTracerProvider()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(before); _ = tp.Shutdown(context.Background()) })

	secret := "Jane Doe, card 4111 1111 1111 1111, " + strings.Repeat("x", 20000)
	b := racetest.New(t, racetest.Options{Route: race.Route{MaxAttempts: 1}, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Output: `{"category":"` + secret + `","priority":"high","summary":"Customer cannot log in after the reset.","needs_human":false}`}
		}},
	}})
	id := b.Submit(t).ID
	b.WaitSettled(t, id)
	b.Stop()
	invalid := 0
	for _, s := range exp.GetSpans() {
		if strings.Contains(s.Status.Description, "4111") {
			t.Errorf("span %q: its status quotes the output (%d bytes)", s.Name, len(s.Status.Description))
		}
		for _, kv := range s.Attributes {
			if strings.Contains(kv.Value.Emit(), "4111") {
				t.Errorf("span %q: attribute %s quotes the output", s.Name, kv.Key)
			}
		}
		if strings.Contains(s.Status.Description, "contract: enum at /category") {
			invalid++
		}
	}
	if invalid != 1 {
		t.Errorf("%d spans say which rule the output broke and where, want the attempt's", invalid)
	}
}
