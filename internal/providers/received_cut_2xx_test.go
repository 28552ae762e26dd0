package providers

import (
	"context"
	"net/http"
	"testing"
)

// A 2xx answer whose body breaks off mid-way, or comes whole and does not
// decode, is a known outcome: the provider answered (and billed). It is
// marked Received, as a stream cut after its headers is, so that the race
// estimates the usage (cost) of the lost answer, adaptive hedging does not
// count the call as a wait without a first byte, and a job deadline passing
// meanwhile is not taken as unknown. Found by review.
func TestBroken2xxBodyIsReceived(t *testing.T) {
	const (
		partialOpenAI    = `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hel`
		partialAnthropic = `{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"hel`
	)
	notJSON := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"c", this is not JSON}`))
	}
	for _, c := range []struct {
		name      string
		anthropic bool
		h         http.HandlerFunc
	}{
		{"openai body cut", false, cutBody(200, "application/json", nil, partialOpenAI)},
		{"openai body not JSON", false, notJSON},
		{"anthropic body cut", true, cutBody(200, "application/json", nil, partialAnthropic)},
		{"anthropic body not JSON", true, notJSON},
	} {
		srv := newFakeServer(t, c.h)
		var err error
		if c.anthropic {
			_, err = newAnthropicAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		} else {
			_, err = newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		}
		e := mustError(t, err)
		if e.Kind != KindMalformedResponse || !e.Received || e.OutcomeUnknown || e.NotSent || e.StatusCode != 0 {
			t.Errorf("%s: %s received %v unknown %v not sent %v status %d (%q), want malformed_response received",
				c.name, e.Kind, e.Received, e.OutcomeUnknown, e.NotSent, e.StatusCode, e.Message)
		}
	}
}
