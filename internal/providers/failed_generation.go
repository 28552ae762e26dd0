package providers

import "strings"

// failedGeneration reports an error that says the model's generation failed,
// not the request: Groq answers a tool call or a JSON answer its model got
// wrong with HTTP 400 invalid_request_error, code tool_use_failed ("Failed to
// call a function. Please adjust your prompt. See 'failed_generation' for
// more details.") or json_validate_failed ("Failed to generate JSON. …"),
// and with the same error inside a 200 stream. The model ran and the
// provider billed it; another target (or another try) may answer, so it is
// the provider's: KindMalformedResponse, failed over, received (generated).
// Known by the code, or by the message's opening words when a gateway
// dropped the code.
func failedGeneration(code, msg string) bool {
	switch code {
	case "tool_use_failed", "json_validate_failed":
		return true
	}
	m := strings.ToLower(strings.TrimSpace(msg))
	return strings.HasPrefix(m, "failed to call a function") || strings.HasPrefix(m, "failed to generate json")
}

// generated marks e, when it is a failed generation (failedGeneration: the
// only way an error status or event is classified KindMalformedResponse), as
// received: the provider answered after generating, so the outcome is known
// and the attempt is billed; and returns e.
func (e *Error) generated() *Error {
	if e.Kind == KindMalformedResponse {
		e.Received = true
	}
	return e
}

// refusedInStream reports whether an error event that came in a 200 stream
// before any of the answer (first) is the provider refusing the request
// (Error.AnsweredWithError: nothing billed that the router knows of), not a
// generation that failed, which the provider ran and billed (failedGeneration).
func refusedInStream(e *Error, first bool) bool {
	return first && e.Kind != KindMalformedResponse
}
