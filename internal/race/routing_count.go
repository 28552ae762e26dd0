package race

import (
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/tokens"
)

// promptCount is the prompt's count under one encoding (tokens.
// CountMessagesUpToFor): exact false says counting stopped once n passed the
// most room a target of that encoding has, so n is a lower bound (the prompt
// has more than n tokens) and the prompt fits none of them.
type promptCount struct {
	encoding string
	n        int
	exact    bool
	err      error
}

// promptCounts are one routing decision's counts of the prompt, one per
// encoding: every target of an encoding shares its count (docs/prompts.md
// §5: count once per distinct encoding on the route, not once per
// provider). It holds the four offline encodings without allocating; a
// fifth, were one added, would be counted for each target, as before.
type promptCounts struct {
	counted [4]promptCount
	len     int
}

// of is the prompt's count under encoding: the one counted for an earlier
// target of the route, else counted now, up to the most room any target of
// that encoding has on the route (roomFor), for sp's owner.
func (pc *promptCounts) of(r *Runner, route *Route, sp *spec, msgs []providers.Message, encoding string) promptCount {
	for _, c := range pc.counted[:pc.len] {
		if c.encoding == encoding {
			return c
		}
	}
	c := promptCount{encoding: encoding}
	c.n, c.exact, c.err = tokens.CountMessagesUpToFor(sp.owner, encoding, msgs, r.roomFor(route, sp, encoding))
	if pc.len < len(pc.counted) {
		pc.counted[pc.len] = c
		pc.len++
	}
	return c
}

// roomFor is the most tokens of prompt any target of route that counts with
// encoding could hold: its context window less the max_tokens it is sent
// (sentTo). A prompt with more fits none of them, so counting further would
// only tell by how much.
func (r *Runner) roomFor(route *Route, sp *spec, encoding string) int {
	room := 0
	for _, name := range route.Providers {
		t, ok := r.cfg.Targets[name]
		if !ok {
			continue
		}
		t, enc, maxTokens, _, err := r.sentTo(name, t, sp)
		if err != nil || enc != encoding || t.ContextWindow <= 0 || maxTokens >= t.ContextWindow {
			continue
		}
		room = max(room, t.ContextWindow-maxTokens)
	}
	return room
}

// sentTo is what routing judges target name (t, as configured) by for sp:
// the target of the model sent (a model passed through is judged as its own
// target: targetFor, not as t's model), the encoding it counts with, and the
// max_tokens it is sent (tokens.MaxTokensSent: the request's, else the
// target's default, which byDefault says). err says the tokens cannot be
// counted.
func (r *Runner) sentTo(name string, t *Target, sp *spec) (sent *Target, encoding string, maxTokens int, byDefault bool, err error) {
	model := sp.modelOn(t)
	sent = r.targetFor(name, t, model)
	encoding, err = tokens.EncodingForModel(sent.Encoding, model)
	if err != nil {
		return sent, "", 0, false, err
	}
	maxTokens, byDefault = tokens.MaxTokensSent(sp.maxTokens, sent.DefaultMaxTokens)
	return sent, encoding, maxTokens, byDefault, nil
}
