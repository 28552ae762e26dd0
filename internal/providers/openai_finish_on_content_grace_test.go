package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// A gateway that puts "stop" on every chunk but the first, with a slow
// upstream between chunks and keep-alives meanwhile: the finish_reason on a
// content chunk does not end the answer, so the grace that keep-alives do
// not renew (answerGrace) must not start there — the answer came whole only
// with the chunks after the keep-alives. Found by review: the grace cut it
// and returned "Step 1: … Step 2:" as the whole answer.
func TestFinishOnContentThenKeepAlivesIsNotCutByTheGrace(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w)
		sse(w, chunk("Step 1: unplug the router.", ""), chunk(" Step 2:", "stop"))
		for i := 0; i < 75; i++ { // 1.5 s of keep-alives, beyond the 1 s idle timeout
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
			fmt.Fprint(w, ": keep-alive\n\n")
			w.(http.Flusher).Flush()
		}
		sse(w, chunk(" wait 30 seconds.", "stop"), "[DONE]")
	})
	p := newTestAdapter(t, srv.URL, func(cfg *OpenAIConfig) {
		cfg.Stream, cfg.Timeout, cfg.StreamIdleTimeout = true, 30*time.Second, time.Second
	})
	resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Step 1: unplug the router. Step 2: wait 30 seconds."; resp.Content != want {
		t.Fatalf("returned %q (finish %q) as the whole answer; want %q: the rest was still coming", resp.Content, resp.FinishReason, want)
	}
}
