package race

import (
	"fmt"

	"github.com/routerhq/router/internal/tokens"
)

// Decision says whether one provider of a route could be used for a job, and
// why not. The list of decisions is the job's `routing`.
type Decision struct {
	Provider     string `json:"provider"`
	Eligible     bool   `json:"eligible"`
	Reason       string `json:"reason,omitempty"`
	PromptTokens int    `json:"prompt_tokens,omitempty"`
	Encoding     string `json:"encoding,omitempty"`
}

// decide checks each provider of the route for this rendered prompt.
func (r *Runner) decide(route *Route, sp *spec) []Decision {
	out := make([]Decision, 0, len(route.Providers))
	for _, name := range route.Providers {
		d := Decision{Provider: name}
		t, ok := r.cfg.Targets[name]
		if !ok {
			d.Reason = "provider is not configured"
			out = append(out, d)
			continue
		}
		model := t.Model
		if sp.model != "" {
			model = sp.model
		}
		enc, err := tokens.EncodingForModel(t.Encoding, model)
		if err != nil {
			d.Reason = "cannot count tokens: " + err.Error()
			out = append(out, d)
			continue
		}
		d.Encoding = enc
		need, fits, err := tokens.Fits(enc, sp.msgs, sp.maxTokens, t.ContextWindow)
		d.PromptTokens = need - sp.maxTokens
		switch {
		case err != nil:
			d.Reason = "cannot count tokens: " + err.Error()
		case t.ContextWindow > 0 && !fits:
			d.Reason = fmt.Sprintf("context window too small: the prompt needs %d tokens plus max_tokens %d = %d, the window holds %d",
				need-sp.maxTokens, sp.maxTokens, need, t.ContextWindow)
		default:
			d.Eligible = true
		}
		out = append(out, d)
	}
	return out
}
