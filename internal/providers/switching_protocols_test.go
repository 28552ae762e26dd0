package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// A provider that answers 101 Switching Protocols (a misconfigured proxy, a
// hostile endpoint) and then keeps the connection open and silent ends the
// call at once as a misconfigured target: Go's client hands a 101's
// connection to the caller as its body, detached from the request's
// deadline, so a read of that body waited until the other end closed it —
// past the call's timeout and its context. Found in review (the webhook
// sender had the same hold).
func TestSwitchingProtocolsAnswerEndsTheCall(t *testing.T) {
	for _, adapter := range []string{"openai", "anthropic"} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", adapter, stream), func(t *testing.T) {
				srv := newFakeServer(t, nil)
				release := releaseAtCleanup(t)
				srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					conn, buf, err := http.NewResponseController(w).Hijack()
					if err != nil {
						return
					}
					defer conn.Close()
					fmt.Fprint(buf, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
					_ = buf.Flush()
					<-release // open and silent
				})
				var p Provider = newTestAdapter(t, srv.URL, func(cfg *OpenAIConfig) { cfg.Stream = stream })
				if adapter == "anthropic" {
					p = newAnthropicAdapter(t, srv.URL, func(cfg *AnthropicConfig) { cfg.Stream = stream })
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				done := make(chan error, 1)
				go func() {
					_, err := p.Complete(ctx, testRequest())
					done <- err
				}()
				select {
				case err := <-done:
					e := mustError(t, err)
					if e.Kind != KindMisconfigured || e.StatusCode != http.StatusSwitchingProtocols {
						t.Fatalf("%s / status %d: %s; want misconfigured, status 101", e.Kind, e.StatusCode, e.Message)
					}
				case <-time.After(time.Minute): // a hang guard, not a timing assertion
					t.Fatal("the call never ended: it waits on the 101's detached connection")
				}
			})
		}
	}
}
