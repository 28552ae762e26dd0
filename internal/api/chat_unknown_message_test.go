package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// A chat request whose job ended unknown is told once that the outcome is
// unknown, and which attempt an operator resolves, with the request filled
// in: it said so twice, the second time as "…/attempts/{seq}/resolve".
// Found in review.
func TestChatUnknownOutcomeNamesTheAttemptOnce(t *testing.T) {
	b := setup(t, options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	_, code, _, msg := openAIErr(r)
	if r.status != http.StatusGatewayTimeout || code != "outcome_unknown" {
		t.Fatalf("status %d code %q message %q; want 504 outcome_unknown", r.status, code, msg)
	}
	if strings.Contains(msg, "{seq}") || !strings.Contains(msg, "/attempts/1/resolve") || strings.Count(msg, "outcome is unknown") != 1 {
		t.Fatalf("message %q: want the attempt to resolve named (/attempts/1/resolve) and the unknown outcome said once", msg)
	}
}
