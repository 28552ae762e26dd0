package providers

import (
	"context"
	"net/http"
	"testing"
)

// A stream without message_start was accepted: the answer had no id, no
// model and no input tokens, and its usage (output tokens only, not all
// zero) was kept as the provider's own figures, the prompt recorded as
// costing nothing. An event of the message before message_start is a
// malformed stream, received, without usage (the race estimates the
// prompt). Found by review.
func TestAnthropicStreamNeedsMessageStart(t *testing.T) {
	for name, evs := range map[string][]string{
		"no message_start":   anthWhole[1:],
		"stop reason only":   anthWhole[5:],
		"message_stop only":  anthWhole[6:],
		"message_start late": append(append([]string{anthWhole[1]}, anthWhole[0]), anthWhole[2:]...),
	} {
		t.Run(name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { anthSSE(w, evs...) })
			p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
			resp, err := p.Complete(context.Background(), testRequest())
			if err == nil {
				t.Fatalf("stream without message_start accepted: %+v", resp)
			}
			e := mustError(t, err)
			if e.Kind != KindStreamMalformed || !e.Received || e.Usage != nil {
				t.Fatalf("kind %s received %v usage %+v: %v", e.Kind, e.Received, e.Usage, e)
			}
		})
	}
}
