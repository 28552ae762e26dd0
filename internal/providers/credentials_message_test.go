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
	// The other failures about the router's account at the provider: its
	// rate limits (OpenAI's name the organization and its limits), its quota
	// and billing, the models it may use. The kind and code still say what
	// happened; the caller's own faults keep the provider's words.
	for name, c := range map[string]struct {
		e    *Error
		kind Kind
	}{
		"rate limit": {ClassifyStatus("openai", 429, "rate_limit_exceeded",
			"Rate limit reached for gpt-4o in organization org-AbCdEf123 on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000."), KindRateLimited},
		"quota":         {ClassifyStatus("openai", 429, "insufficient_quota", "You exceeded your current quota, please check your plan and billing details."), KindQuotaExceeded},
		"model":         {ClassifyStatus("openai", 404, "model_not_found", "The model `gpt-9` does not exist or you do not have access to it."), KindModelNotFound},
		"anthropic 429": {classifyAnthropicAPI("claude", 429, "rate_limit_error", "", "This request would exceed your organization's (org-123) rate limit", nil), KindRateLimited},
	} {
		if c.e.Kind != c.kind || c.e.Message != operatorsMessages[c.kind] || c.e.ProviderMessage == "" ||
			strings.Contains(c.e.Error(), "org-") || strings.Contains(c.e.Error(), "billing details") {
			t.Errorf("%s: kind %s Message %q ProviderMessage %q: want the router's words for the tenant, the provider's kept for the log",
				name, c.e.Kind, c.e.Message, c.e.ProviderMessage)
		}
	}
	const callers = "Invalid value for 'temperature': expected a number between 0 and 2."
	if e := ClassifyStatus("openai", 400, "invalid_value", callers); e.Message != callers || e.ProviderMessage != "" {
		t.Errorf("a caller's fault lost the provider's message: %q / %q", e.Message, e.ProviderMessage)
	}
}
