package providers

import (
	"net/http"
	"strings"
)

// modelRefused reports an error that says the target's provider does not
// serve the model the router sent, whatever its status: OpenAI's code
// model_not_found (also in a 400, or as an error event in a 200 stream, with
// type invalid_request_error) and model_not_available, Mistral's type
// invalid_model, OpenRouter's 400 "… is not a valid model ID", LiteLLM's 400
// "Invalid model name passed in model=…" and DeepSeek's 400 "Model Not
// Exist", and a model the provider retired or that cannot do chat
// completions: Groq's 400 code model_decommissioned ("The model `…` has been
// decommissioned and is no longer supported"), Azure OpenAI's 400 code
// OperationNotSupported ("The chatCompletion operation does not work with the
// specified model, …": an embeddings deployment). The model sent is the
// router's configuration (the target's model, or one of its route's
// `models`), never the caller's: model_not_found, as a 404 is, failed over
// and counted by the breaker of the model sent. m is the message,
// lower-cased.
func modelRefused(code, typ, m string) bool {
	return code == "model_not_found" || code == "model_not_available" || typ == "invalid_model" ||
		code == "model_decommissioned" ||
		strings.Contains(m, "is not a valid model id") ||
		strings.Contains(m, "invalid model name passed in model=") ||
		strings.Contains(m, "model not exist") ||
		strings.Contains(m, "has been decommissioned") ||
		strings.Contains(m, "does not work with the specified model")
}

// accountRestricted reports an error code that says the provider refuses the
// router's account itself, whatever the request: Groq's 400
// organization_restricted ("Organization has been restricted. Please reach
// out to support …"). The message's words are known by accountRefusal.
func accountRestricted(code string) bool {
	return code == "organization_restricted"
}

// quotaCode reports an error code or type that says the router's account is
// out of quota or has no active billing, whatever the status (a 429 from
// OpenAI, which waiting does not help): insufficient_quota, and
// billing_not_active ("Your account is not active, please check your billing
// details on our website.").
func quotaCode(code, typ string) bool {
	return code == "insufficient_quota" || typ == "insufficient_quota" ||
		code == "billing_not_active" || typ == "billing_not_active"
}

// quotaWords reports a 429's message that says the router's account is out
// of credit or past a spending cap, which no wait passes, when the provider
// says so only in words: xAI's "Your team … has either used all available
// credits or reached its monthly spending limit." (its code "Some resource
// has been exhausted"). Gemini's "You exceeded your current quota" is not
// among them: Gemini says so of its per-minute limits too, which pass.
func quotaWords(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "used all available credits") || strings.Contains(m, "spending limit")
}

// rateLimitCode reports an error code or type that says the router's account
// hit a rate limit at the provider, whatever the status: OpenAI's and Groq's
// code rate_limit_exceeded (Groq's 413 "Request too large … on tokens per
// minute" has it), a type that names rate_limit.
func rateLimitCode(code, typ string) bool {
	return code == "rate_limit_exceeded" || strings.Contains(typ, "rate_limit")
}

// tooLargeForLimitMessage is what a rate limit the request alone exceeds says
// in place of the provider's message (which names the router's organization
// and its limits, see operatorsOwn).
const tooLargeForLimitMessage = "the request alone is larger than the router's account's per-minute limit at this target; " +
	"the router fails over to another target without retrying this one " +
	"(the provider's own message, which names the account and its limits, is in the router's log)"

// failOverTooLarge gives a rate limit that this one request exceeds by itself
// — Groq's 413, OpenAI's 429 "Request too large for … on tokens per min" —
// ActionFailover: retrying the same target after its reset is refused again,
// however long it waits, while another target (another account, another
// provider) may take it. It is FaultCaller, as a prompt over a target's
// context window is: the target is well, this one request is too large for
// it, and counted against the breaker one tenant's oversized prompts would
// open it for every tenant. Called after operatorsOwn; returns e.
func (e *Error) failOverTooLarge(msg string) *Error {
	if e.Kind != KindRateLimited {
		return e
	}
	if e.StatusCode == http.StatusRequestEntityTooLarge || strings.Contains(strings.ToLower(msg), "request too large") {
		e.failOverAsCallers(tooLargeForLimitMessage)
	}
	return e
}

// failOverAsCallers makes e a refusal of this one request that no wait at
// this target fixes: ActionFailover, FaultCaller (the breaker does not count
// it), the tenant told message, the provider's own kept for the log.
func (e *Error) failOverAsCallers(message string) {
	e.Action, e.Fault = ActionFailover, FaultCaller
	if e.ProviderMessage == "" {
		e.ProviderMessage = e.Message
	}
	e.Message = message
}
