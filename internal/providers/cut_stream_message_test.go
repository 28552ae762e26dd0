package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A stream cut before [DONE] after a finish_reason that came on chunks of the
// answer quoted that finish_reason whole: a provider's 200 KB went into the
// attempt's error, its span status and the tenant's view. It is cut like
// every other provider text. Found by review.
func TestCutStreamMessageIsBounded(t *testing.T) {
	long := strings.Repeat("x", 200_000)
	url := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		sse(w, chunk("Hello", long), chunk(" wor", long))
	}).URL
	p := newTestAdapter(t, url, func(cfg *OpenAIConfig) { cfg.Timeout = 5 * time.Second })
	_, err := p.CompleteStream(context.Background(), testRequest(), nil)
	if err == nil {
		t.Fatal("precondition: the cut stream answered")
	}
	e := mustError(t, err)
	if e.Kind != KindStreamCut || !strings.Contains(e.Message, "without [DONE]") {
		t.Fatalf("precondition: %s: %.200s", e.Kind, e.Message)
	}
	if len(e.Message) > maxMessage+len("…") || len(e.Error()) > 2*maxMessage {
		t.Fatalf("%s: Message is %d bytes (Error() %d): a span status, stored error and tenant-visible text of that size", e.Kind, len(e.Message), len(e.Error()))
	}
	if !strings.Contains(e.Message, `finish_reason "xxx`) {
		t.Errorf("the message no longer names the finish_reason: %s", e.Message)
	}
}
