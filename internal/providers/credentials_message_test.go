package providers

import (
	"strings"
	"testing"
)

// A refused credential's message — OpenAI's quotes the end of the router's
// key — is not what the attempt stores and the job's owner sees: Message says
// what to do, and the provider's words stay in ProviderMessage for the
// router's log. Other failures keep the provider's message.
func TestRefusedCredentialMessageStaysOutOfMessage(t *testing.T) {
	const openAISays = "Incorrect API key provided: sk-proj-****************************abcd. You can find your API key at https://platform.openai.com/account/api-keys."
	for name, e := range map[string]*Error{
		"openai 401":    ClassifyStatus("openai", 401, "invalid_api_key", openAISays),
		"anthropic 401": classifyAnthropicAPI("claude", 401, "authentication_error", "", "invalid x-api-key: sk-ant-…wxyz", nil),
		"anthropic 403": classifyAnthropicAPI("claude", 403, "permission_error", "", "Your API key does not have permission to use the specified resource.", nil),
	} {
		if e.Kind != KindAuth {
			t.Fatalf("%s: kind %s, want auth", name, e.Kind)
		}
		if strings.Contains(e.Message, "sk-") || strings.Contains(e.Error(), "sk-") || !strings.Contains(e.Message, "api_key_env") {
			t.Errorf("%s: Message %q (Error %q): want the operator's instruction, not the provider's words", name, e.Message, e.Error())
		}
		if e.ProviderMessage == "" || e.ProviderMessage == e.Message {
			t.Errorf("%s: ProviderMessage %q, want the provider's own message kept for the log", name, e.ProviderMessage)
		}
	}
	if e := ClassifyStatus("openai", 429, "rate_limit_exceeded", "Rate limit reached for gpt-4o"); e.Message != "Rate limit reached for gpt-4o" || e.ProviderMessage != "" {
		t.Errorf("a rate limit's message was replaced: %q / %q", e.Message, e.ProviderMessage)
	}
}
