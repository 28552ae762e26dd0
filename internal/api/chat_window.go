package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
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

// tooLongProblem is the answer to a job that every target of its route
// excluded because the rendered prompt plus the prompt's max_tokens does not
// fit its context window (routing, a plan's decisions, none eligible), or nil
// when some target was excluded for another reason. Such a job is too long
// for the route, whatever the breakers do later: a 422 naming the token
// counts and the windows, not a 503 that tells the caller to send it again
// unchanged. Nothing was stored, so the key may be used again.
//
// When the prompt's max_tokens alone fills every window, no input fits: that
// is the prompt's definition and the router's configuration, not the input.
func tooLongProblem(nj store.NewJob, routing json.RawMessage) *problem {
	if _, param, tooLong := tooLongForEvery(routing); !tooLong {
		return nil
	} else if param == "max_tokens" {
		return &problem{Status: http.StatusUnprocessableEntity, Type: "max-tokens-fill-window", Title: "The prompt's max_tokens fills every context window",
			Detail: fmt.Sprintf("prompt %q version %q asks for more output tokens (max_tokens) than any target of route %q holds, so no input fits (%s); "+
				"this is the prompt's definition and the router's configuration, not the input: ask the router's operator. Nothing was stored",
				nj.Operation, nj.PromptVersion, nj.Route, windowReasons(routing)),
			Extra: map[string]any{"routing": routing}}
	}
	return &problem{Status: http.StatusUnprocessableEntity, Type: "input-too-long", Title: "Input too long for every target",
		Detail: fmt.Sprintf("the rendered prompt plus its max_tokens does not fit the context window of any target of route %q (%s); "+
			"shorten the input: sending it again unchanged fails again. Nothing was stored, so the Idempotency-Key may be used for the shortened input",
			nj.Route, windowReasons(routing)),
		Extra: map[string]any{"routing": routing}}
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
