package providers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
)

// A chat caller's temperature (0.7: LangChain's old default, many SDK
// wrappers send one) reaching a reasoning-model target is the caller's
// request, not the router's configuration: it must not count as a failure
// of a healthy target (FaultRouter/misconfigured is a breaker failure in
// race.outcomeOf), or any tenant can open the target's breaker for all.
// A caller's temperature that a reasoning model cannot take (0.7 on o3) is
// the request's fault, not the target's: refused as a bad request that may
// fail over to another target, never a breaker failure (misconfigured, the
// router's fault, would let any tenant open a healthy target's breaker).
func TestReasoningModelCallerTemperatureIsNotATargetFailure(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, completionBody)
	})
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Model = "o3-mini" })
	req := testRequest()
	req.MaxTokens = 300
	temp := float32(0.7)
	req.Temperature = &temp
	_, err := p.Complete(context.Background(), req)
	var pe *Error
	if errors.As(err, &pe) && pe.Fault != FaultCaller {
		t.Fatalf("o3-mini with a caller's temperature 0.7: %v (kind %s, fault %s); want it sent, or refused as the caller's fault (not a breaker failure)", err, pe.Kind, pe.Fault)
	}
}
