package race

import (
	"fmt"
	"strings"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// ReasonContextWindow begins the reason of every decision that excludes a
// target because the request does not fit its context window: a request
// excluded from every target for it is too long, not unlucky (the chat API
// answers it as OpenAI does, 400 context_length_exceeded).
const ReasonContextWindow = "context window too small"

// ReasonMaxTokensFill begins the reason of a decision excluding a target
// whose window max_tokens alone fills (one of ReasonContextWindow's).
const ReasonMaxTokensFill = ReasonContextWindow + ": max_tokens"

// Decision says whether one target of a route could be used for a job, and
// why not. The list of decisions is the job's `routing`. A decision with an
// Event records something that happened later in the race (hedge_denied).
//
// Cause says by kind why a target is ineligible (one of the Cause
// constants), beside Reason, which says it in words for a person: code that
// acts on why (next_step, a failed chat call's 502: GatedTargets) reads
// Cause, never Reason's text, which names targets, prompts and models that
// may contain any word. Every ineligible decision (not an Event) the router
// makes carries one; an eligible one, or an Event, has none. Routing stored
// by a router from before Cause has none on any decision (GatedTargets then
// falls back to the older reading of Reason).
type Decision struct {
	Provider     string `json:"provider"`
	Event        string `json:"event,omitempty"`
	Eligible     bool   `json:"eligible"`
	Reason       string `json:"reason,omitempty"`
	Cause        string `json:"cause,omitempty"`
	PromptTokens int    `json:"prompt_tokens,omitempty"`
	Encoding     string `json:"encoding,omitempty"`
}

// The causes of an ineligible Decision (Decision.Cause).
const (
	// CauseNotConfigured: the route names a target the configuration does
	// not define.
	CauseNotConfigured = "not_configured"
	// CauseTokenCount: the request's tokens could not be counted with the
	// target's tokenizer.
	CauseTokenCount = "token_count"
	// CauseContextWindow: the request does not fit the target's context
	// window (ReasonContextWindow), or a target whose window is no larger
	// rejected it as too long.
	CauseContextWindow = "context_window"
	// CauseBreaker: the target's circuit breaker refuses it now, which
	// clears by itself.
	CauseBreaker = "breaker"
	// CauseConformanceGate: the conformance gate (SPEC §9, conformance.gate)
	// refuses the target the role it would have (no fresh passing run, or
	// its results could not be read), at the plan or later in the race
	// (gateDecision). It does not clear by itself: a retry is gated the same
	// way until the target passes.
	CauseConformanceGate = "conformance_gate"
)

// decide checks each provider of the route for this rendered prompt.
func (r *Runner) decide(route *Route, sp *spec) []Decision {
	out, _ := r.decideRefusals(route, sp, nil)
	return out
}

// decideRefusals is decide that also names the targets that are ineligible
// only because their circuit breaker (the Admission) refuses them now, which
// clears by itself (breakerWait), each with that breaker's name (breakerOf);
// nil when there is none.
//
// The conformance gate is asked last, about every target that passed the
// other checks — its circuit breaker's aside — all at once (gateAll): the
// reads it needs run together, so a plan waits for the slowest one, not
// their sum, before its first attempt. A target both refuse is the gate's
// (gateOverBreaker): not deferred, not waited for. The gate is not asked
// about a target in tried (one a resumed job already tried in its current
// round, triedInRound): the gate admitted it then, and what the race may
// still send it is a retry, which is not asked again (as in a live race).
func (r *Runner) decideRefusals(route *Route, sp *spec, tried map[string]bool) (out []Decision, byBreaker map[string]string) {
	out = make([]Decision, 0, len(route.Providers))
	msgs := counted(sp)
	bound := byteBound(msgs)
	var prompt promptCounts
	var asks []GateAsk
	var asked []int // the index in out of each ask's decision
	for _, name := range route.Providers {
		d := Decision{Provider: name}
		t, ok := r.cfg.Targets[name]
		if !ok {
			d.Reason, d.Cause = "provider is not configured", CauseNotConfigured
			out = append(out, d)
			continue
		}
		// The window, tokenizer and default max_tokens are those of the
		// model sent: a model passed through is judged as its own target
		// (targetFor), not as t's model. A negative max_tokens (a stored job
		// from before the API refused one) asks for nothing: it must not
		// shrink the prompt's need. A request that sets none gets the
		// adapter's default, if it sends one (Anthropic requires max_tokens,
		// and refuses a prompt plus max_tokens beyond the window): counted as
		// sent.
		t, enc, maxTokens, byDefault, err := r.sentTo(name, t, sp)
		if err != nil {
			d.Reason, d.Cause = "cannot count tokens: "+err.Error(), CauseTokenCount
			out = append(out, d)
			continue
		}
		d.Encoding = enc
		defaulted, advice := "", ""
		if byDefault {
			defaulted = " (the target's default, sent because the request sets none)"
			advice = ": set a smaller max_tokens (the request's, or the prompt's)"
		}
		switch {
		case t.ContextWindow <= 0 || within(bound, maxTokens, t.ContextWindow):
			// A token covers at least one byte, so the prompt fits without
			// counting: tokenizing is the costliest step of routing.
			d.Eligible = true
		case maxTokens >= t.ContextWindow:
			// No prompt fits beside it (and adding to it could overflow).
			d.Reason = fmt.Sprintf(ReasonMaxTokensFill+" %d%s alone fills the window of %d tokens%s",
				maxTokens, defaulted, t.ContextWindow, advice)
			d.Cause = CauseContextWindow
		default:
			// Counted once per encoding for the whole route, and only up to
			// the most room a target of it has (promptCounts).
			c := prompt.of(r, route, sp, msgs, enc)
			if c.err != nil {
				d.Reason, d.Cause = "cannot count tokens: "+c.err.Error(), CauseTokenCount
				break
			}
			need, fits := tokens.FitsCount(c.n, maxTokens, t.ContextWindow)
			d.PromptTokens = need - maxTokens
			switch {
			case !fits:
				// A count that stopped past every window is a lower bound.
				more := ""
				if !c.exact {
					more = "more than "
				}
				d.Reason = fmt.Sprintf(ReasonContextWindow+": the prompt needs %s%d tokens plus max_tokens %d%s = %s%d, the window holds %d%s",
					more, need-maxTokens, maxTokens, defaulted, more, need, t.ContextWindow, advice)
				d.Cause = CauseContextWindow
			default:
				d.Eligible = true
			}
		}
		if d.Eligible {
			var key string
			d.Eligible, d.Reason, key = r.admissible(name, sp)
			if !d.Eligible {
				d.Cause = CauseBreaker
				if byBreaker == nil {
					byBreaker = map[string]string{}
				}
				byBreaker[name] = key
			}
			// Asked also of a target its breaker refuses: a refusal by the
			// gate wins (gateOverBreaker).
			if r.cfg.Gate != nil && sp.gate != nil && !tried[name] {
				asks = append(asks, GateAsk{Provider: name, Model: sp.modelOn(r.cfg.Targets[name]), Prompt: sp.gate, Role: r.roleOf(route, name)})
				asked = append(asked, len(out))
			}
		}
		out = append(out, d)
	}
	for i, a := range gateAll(r.cfg.Gate, asks) {
		d := &out[asked[i]]
		if a.OK || !gateOverBreaker(d, a.Reason) {
			continue
		}
		delete(byBreaker, d.Provider) // not deferred: the race does not wait for it
		d.Eligible, d.Reason, d.Cause = false, a.Reason, CauseConformanceGate
	}
	return out, byBreaker
}

// gateOverBreaker says whether the conformance gate's refusal (why) is the
// decision d carries. It is for a target the other checks passed; for one
// its circuit breaker refuses too, it is unless the gate could not read its
// results (GateUnread: its next read will likely succeed, and the breaker
// says when to ask again). An open breaker clears by itself and says when
// (its reason gives the 503's Retry-After, and the race may wait for it); a
// gate's refusal does not clear until the target passes, so naming the
// breaker alone would tell the caller to resend after Retry-After, and the
// resend would be refused again, by the gate.
func gateOverBreaker(d *Decision, why string) bool {
	return d.Cause != CauseBreaker || !strings.HasPrefix(why, GateUnread)
}

// counted is what the context-window check counts of a request
// (tokens.Counted, which the conformance runner counts too): its messages,
// the tools' definitions, the response format's schema, name and
// description, or the json_object instruction.
func counted(sp *spec) []providers.Message {
	return tokens.Counted(sp.msgs, sp.format, sp.formatText, sp.tools)
}

// byteBound is an upper bound of the tokens of msgs as tokens.CountMessages
// counts them (tokens.ByteBound).
func byteBound(msgs []providers.Message) int { return tokens.ByteBound(msgs) }

// within says whether prompt tokens plus maxTokens fit in window, all three
// non-negative, without computing a sum that could overflow.
func within(prompt, maxTokens, window int) bool {
	return maxTokens <= window && prompt <= window-maxTokens
}

// roleOf is the role a provider of the route plays for gating (RoleOf).
func (r *Runner) roleOf(route *Route, provider string) string {
	return RoleOf(route.Providers, provider)
}

// RoleOf is the role a target of a route (targets, primary first) plays for
// conformance gating: the route's first target is the primary
// (store.RolePrimary), every other one a fallback (store.RoleFailover) —
// whatever order attempts happen to start in. The operator views and the
// start-up warning judge targets by it too.
func RoleOf(targets []string, target string) string {
	if len(targets) > 0 && targets[0] == target {
		return store.RolePrimary
	}
	return store.RoleFailover
}

// stateView is the optional, non-consuming view of an Admission (a breaker
// set) used to explain routing.
type stateView interface {
	State(provider string) (ok bool, reason string)
}

// admissible says whether the breaker of provider (the one of the model
// sent: breakerOf) lets it take an attempt now, and why not, with the name
// of the breaker that refuses it (key). The conformance gate is asked about
// all the plan's targets together, after (decideRefusals).
func (r *Runner) admissible(provider string, sp *spec) (ok bool, why, key string) {
	if v, ok := r.cfg.Admission.(stateView); ok {
		key := r.breakerOf(provider, sp)
		if ok, why := v.State(key); !ok {
			return false, breakerWhy(provider, key, why), key
		}
	}
	return true, "", ""
}

// skipTooLong re-derives, for a race that resumes a round (a job adopted by
// recovery or after a drain's hand-over, or resumed after a resolution),
// what the round's context-length rejections decided when they came
// (orchestrator.handle, through the same skipTooLongAfter): a request that a
// target rejected as too long fits no target with no more room for it,
// counted with the same tokenizer. Without it the resumed race would send
// the request to such a target for a certain context_length_exceeded.
func (o *orchestrator) skipTooLong(job *store.Job) {
	for _, a := range job.Attempts {
		if inRound(job, a) && kindOf(a) == providers.KindContextLength {
			o.skipTooLongAfter(a.Provider)
		}
	}
}

// skipTooLongAfter applies rejecter's context-length rejection: rejecter is
// tried (its own failure, not a skip, explains it) and every candidate with
// no more room for the prompt than rejecter (roomOf: the window of the
// model it is sent less the max_tokens it is sent, as decide judges it) is
// skipped, if it counts with the rejecter's tokenizer. Each target it
// skips becomes ineligible in the routing the race records, with why, as
// decide says of a window too small for the counted prompt (SPEC §4.2). It
// reports whether it changed any decision.
//
// A rejection by another tokenizer proves nothing: Claude's, which the
// router only estimates (docs/prompts.md), can refuse a prompt that o3's
// exact count fits with room to spare. So a candidate is skipped only when
// both count exactly with the same encoding, or both are estimates (their
// tokenizers unknown alike: one refusal is the best evidence there is).
func (o *orchestrator) skipTooLongAfter(rejecter string) bool {
	limit, ok := o.roomOf(rejecter)
	if !ok {
		return false // a target no longer configured, or of no known window, bounds nothing
	}
	o.used[rejecter] = true
	changed := false
	for _, c := range o.candidates {
		room, ok := o.roomOf(c)
		if o.used[c] || !ok || room.n > limit.n || !room.sameTokenizer(limit) {
			continue
		}
		o.used[c] = true
		o.reasons[c] = c + ": skipped: its room for the prompt (context window less max_tokens) is no larger than that of a target that rejected the request as too long"
		for i := range o.decisions {
			if d := &o.decisions[i]; d.Provider == c && d.Event == "" {
				d.Eligible = false
				d.Reason = fmt.Sprintf(ReasonContextWindow+": %s rejected the request as too long, and this target's window of %d tokens%s is no larger than its %s",
					rejecter, room.window, lessMaxTokens(room.maxTokens), limit)
				d.Cause = CauseContextWindow
				changed = true
			}
		}
	}
	return changed
}

// promptRoom is the room a target has for the prompt of a job: its window
// less the max_tokens it is sent, counted with encoding (exact: the model's
// own tokenizer, not an estimate).
type promptRoom struct {
	n, window, maxTokens int
	encoding             string
	exact                bool
}

// sameTokenizer says whether a prompt rejected as too long by r's tokenizer
// is as long by p's: the same exact encoding, or two estimates.
func (p promptRoom) sameTokenizer(r promptRoom) bool {
	if p.exact || r.exact {
		return p.exact && r.exact && p.encoding == r.encoding
	}
	return true
}

// String is the room as a routing reason gives it: "the window less the
// max_tokens sent".
func (p promptRoom) String() string {
	if p.maxTokens == 0 {
		return fmt.Sprint(p.window)
	}
	return fmt.Sprintf("%d less %d", p.window, p.maxTokens)
}

// lessMaxTokens is what a routing reason adds to a window when max_tokens
// is sent.
func lessMaxTokens(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" less the %d of max_tokens it is sent", n)
}

// roomOf is target id's room for this job's prompt, as routing judges it
// (sentTo: the model the job sends it); ok is false when id is not
// configured or its window is unknown.
func (o *orchestrator) roomOf(id string) (room promptRoom, ok bool) {
	t := o.r.cfg.Targets[id]
	if t == nil {
		return promptRoom{}, false
	}
	sent, enc, maxTokens, _, err := o.r.sentTo(id, t, o.spec)
	if sent.ContextWindow <= 0 {
		return promptRoom{}, false
	}
	if err != nil { // a tokenizer not offline: an estimate, but max_tokens is still sent
		maxTokens, _ = tokens.MaxTokensSent(o.spec.maxTokens, sent.DefaultMaxTokens)
	}
	own, known := tokens.ModelEncoding(o.spec.modelOn(t))
	return promptRoom{
		n: sent.ContextWindow - maxTokens, window: sent.ContextWindow, maxTokens: maxTokens,
		encoding: enc, exact: err == nil && known && own == enc,
	}, true
}
