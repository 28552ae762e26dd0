package race

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// The provider's id of a failed request (providers.Error.ProviderRequestID:
// Anthropic's request-id, an OpenAI-compatible provider's x-request-id) is
// stored in the attempt's error as provider_request_id, beside code and
// param, for the operator to quote to the provider's support; it is not in
// the message. An error without one has no such member.
func TestAttemptErrorProviderRequestID(t *testing.T) {
	pe := providers.NewError("anthropic", providers.KindUnavailable, "HTTP 529: the provider is overloaded")
	pe.StatusCode, pe.Code, pe.ProviderRequestID = 529, "overloaded_error", "req_011CAttemptError"
	b, err := json.Marshal(attemptError(pe))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["provider_request_id"] != "req_011CAttemptError" {
		t.Errorf("provider_request_id %v, want req_011CAttemptError: %s", got["provider_request_id"], b)
	}
	if m, _ := got["message"].(string); strings.Contains(m, "req_011CAttemptError") {
		t.Errorf("the request id is in the message: %q", m)
	}
	pe.ProviderRequestID = ""
	if _, ok := attemptError(pe)["provider_request_id"]; ok {
		t.Errorf("an error without a request id has provider_request_id: %v", attemptError(pe))
	}
}
