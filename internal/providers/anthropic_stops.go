package providers

import "strings"

// Anthropic refuses a stop sequence that is only whitespace (400 "each stop
// sequence must contain non-whitespace"), and "\n" is among the commonest
// stops OpenAI clients send: sent as is, such a request would fail as the
// caller's fault and end its job. anthropicStops splits a request's stop
// sequences into those Anthropic takes (sent as stop_sequences) and those the
// adapter applies to the answer itself (cutAtStops).
func anthropicStops(stops []string) (sent, local []string) {
	for _, s := range stops {
		switch {
		case s == "":
			// It would cut every answer to nothing: skipped (the chat API
			// refuses one before it gets here).
		case strings.TrimSpace(s) == "":
			local = append(local, s)
		default:
			sent = append(sent, s)
		}
	}
	return sent, local
}

// cutAtStops ends r's text at the first of the local stop sequences, as the
// model would have stopped there: the sequence is left out (as OpenAI and
// Anthropic leave theirs out), the finish reason is stop, and tool calls,
// which come after the text, are dropped (the model would not have reached
// them). The usage stays what the provider billed; what was cut away is
// kept as r.CutAtStop, so that an estimate of the output counts it.
func cutAtStops(r *Response, local []string) {
	if r == nil || len(local) == 0 {
		return
	}
	cut := -1
	for _, s := range local {
		if i := strings.Index(r.Content, s); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut < 0 {
		return
	}
	r.CutAtStop = r.Content[cut:] + string(r.ToolCalls)
	r.Content, r.FinishReason, r.ToolCalls = r.Content[:cut], "stop", nil
}
