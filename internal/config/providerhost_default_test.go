package config

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// The config package does not import the adapters (it stays a leaf that
// parses and checks YAML, without the providers' SDKs), so it keeps its own
// copy of the Anthropic adapter's default root to know where a
// type anthropic provider without a base_url sends its key: the copy must
// stay the adapter's value, or key sharing would be judged against a host
// the adapter never calls.
func TestAnthropicDefaultHostIsTheAdapters(t *testing.T) {
	if anthropicDefaultHost != providers.AnthropicBaseURL {
		t.Fatalf("config's anthropicDefaultHost = %q, the adapter's providers.AnthropicBaseURL = %q: make them the same", anthropicDefaultHost, providers.AnthropicBaseURL)
	}
}
