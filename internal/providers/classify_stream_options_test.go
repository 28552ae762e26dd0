package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// The adapter sends stream_options (include_usage) with every streamed call,
// whatever the caller asked. A server that refuses the field (Fireworks in
// 2024: 400 "Extra inputs are not permitted, field: 'stream_options'")
// refuses every job sent to it: that is the target's configuration, not the
// caller's bad request that stopped the job and counted as the breaker's
// success.
func TestStreamOptionsRefusedIsMisconfigured(t *testing.T) {
	for _, body := range []string{
		apiErrorBody("Extra inputs are not permitted, field: 'stream_options'", "invalid_request_error", nil, nil),
		`{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'), 'msg': 'Extra inputs are not permitted'}]","type":"BadRequestError","param":null,"code":400}`,
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { writeError(w, 400, nil, body) })
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true })
		_, err := p.Complete(context.Background(), testRequest())
		e := mustError(t, err)
		if e.Kind != KindMisconfigured || e.Fault != FaultRouter || e.Action != ActionFailover {
			t.Fatalf("got %s/%s/%s, want misconfigured/router/failover: %s", e.Kind, e.Fault, e.Action, e.Message)
		}
		if !strings.Contains(e.Message, "stream: false") || strings.Contains(e.Message, "base_url") {
			t.Fatalf("message %q: it should say what to set (stream: false), not point at base_url", e.Message)
		}
	}
}
