package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/routerhq/router/internal/race"
)

// tooLongForEvery reports whether routing (a plan's decisions, none
// eligible) excluded every target because the request does not fit its
// context window, and every target's reason (windowReasons, as /v1/jobs'
// input-too-long names them): the targets' windows differ, and the one that
// decides how short a request must be may be any target's, not the first's.
// Such a request is too long for the route, whatever the breakers do later:
// OpenAI answers it 400 context_length_exceeded, which clients act on (they
// trim the history); a 503 would be resent by the SDKs, unchanged, and fail
// again.
//
// param is the field to blame, as OpenAI names it: max_tokens when it alone
// fills every window, else messages.
func tooLongForEvery(routing json.RawMessage) (reason, param string, ok bool) {
	var decisions []struct {
		Provider string `json:"provider"`
		Eligible bool   `json:"eligible"`
		Reason   string `json:"reason"`
	}
	if json.Unmarshal(routing, &decisions) != nil || len(decisions) == 0 {
		return "", "", false
	}
	param = "max_tokens"
	for _, d := range decisions {
		if d.Eligible || !strings.HasPrefix(d.Reason, race.ReasonContextWindow) {
			return "", "", false
		}
		if !strings.HasPrefix(d.Reason, race.ReasonMaxTokensFill) {
			param = "messages"
		}
	}
	return windowReasons(routing), param, true
}

// tooLongJob names what tooLongProblem refuses: a new job (POST /v1/jobs,
// nothing stored yet) or a retry of a stored one (retryOf its id, which stays
// failed). chat marks a chat job, whose max_tokens is its caller's, not a
// prompt's.
type tooLongJob struct {
	operation, version, route string
	retryOf                   string
	chat                      bool
}

// tooLongProblem is the answer to a job that every target of its route
// excluded because the rendered prompt plus its max_tokens does not fit its
// context window (routing, a plan's decisions, none eligible), or nil when
// some target was excluded for another reason. Such a job is too long for the
// route, whatever the breakers and the gate do later: a 422 naming the token
// counts and the windows, not a 503 that clients and SDKs resend unchanged.
// A new job was not stored, so its key may be used again; a retried job is
// left failed.
//
// When max_tokens alone fills every window, no input fits: for a prompt job
// that is the prompt's definition and the router's configuration (the
// operator's to change), for a chat job the request's own max_tokens.
func tooLongProblem(j tooLongJob, routing json.RawMessage) *problem {
	_, param, tooLong := tooLongForEvery(routing)
	if !tooLong {
		return nil
	}
	p := &problem{Status: http.StatusUnprocessableEntity, JobID: j.retryOf, Extra: map[string]any{"routing": routing}}
	reasons := windowReasons(routing)
	switch {
	case param == "max_tokens" && j.chat:
		p.Type, p.Title = "max-tokens-fill-window", "The request's max_tokens fills every context window"
		p.Detail = fmt.Sprintf("the chat request asks for more output tokens (max_tokens) than any target of route %q holds, so no input fits (%s); ", j.route, reasons)
	case param == "max_tokens":
		p.Type, p.Title = "max-tokens-fill-window", "The prompt's max_tokens fills every context window"
		p.Detail = fmt.Sprintf("prompt %q version %q asks for more output tokens (max_tokens) than any target of route %q holds, so no input fits (%s); "+
			"this is the prompt's definition and the router's configuration, not the input: ask the router's operator. ", j.operation, j.version, j.route, reasons)
	default:
		p.Type, p.Title = "input-too-long", "Input too long for every target"
		p.Detail = fmt.Sprintf("the rendered prompt plus its max_tokens does not fit the context window of any target of route %q (%s); ", j.route, reasons)
	}
	switch {
	case j.retryOf == "" && p.Type == "input-too-long":
		p.Detail += "shorten the input: sending it again unchanged fails again. Nothing was stored, so the Idempotency-Key may be used for the shortened input"
	case j.retryOf == "":
		p.Detail += "Nothing was stored"
	case param == "max_tokens" && j.chat:
		p.Detail += "retrying it cannot help: the job was not retried and is still failed: send the request again with a smaller max_tokens (and a new Idempotency-Key)"
	case param == "max_tokens":
		p.Detail += "The job was not retried and is still failed"
	default:
		p.Detail += "retrying it cannot help: the job was not retried and is still failed: create a new job with a shorter input (and a new Idempotency-Key)"
	}
	return p
}

// windowReasons lists routing's decisions ("provider: reason", joined by
// "; "), for a problem's detail.
func windowReasons(routing json.RawMessage) string {
	var decisions []struct {
		Provider string `json:"provider"`
		Reason   string `json:"reason"`
	}
	_ = json.Unmarshal(routing, &decisions)
	parts := make([]string, 0, len(decisions))
	for _, d := range decisions {
		parts = append(parts, d.Provider+": "+d.Reason)
	}
	return strings.Join(parts, "; ")
}
