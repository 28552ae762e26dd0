package api

import (
	"encoding/json"
	"strings"

	"github.com/routerhq/router/internal/race"
)

// tooLongForEvery reports whether routing (a plan's decisions, none
// eligible) excluded every target because the request does not fit its
// context window, and the first such reason. Such a request is too long for
// the route, whatever the breakers do later: OpenAI answers it 400
// context_length_exceeded, which clients act on (they trim the history); a 503
// would be resent by the SDKs, unchanged, and fail again.
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
	return decisions[0].Provider + ": " + decisions[0].Reason, param, true
}
