package ops

import "github.com/routerhq/router/internal/prompt"

// The prompt jobs a GateEntry (and the start-up warning) is about, by how
// they reach the route: see RoutePrompt.
const (
	// JobsPrompt is the jobs of a prompt whose `route` is the route: those
	// naming no route in POST /v1/jobs (and those naming it).
	JobsPrompt = "prompt"
	// JobsPromptByRequest is the jobs of a prompt whose `route` is another,
	// that name the route in POST /v1/jobs' `route`.
	JobsPromptByRequest = "prompt_by_request"
	// JobsChat is the route's chat completions, gated by its
	// conformance_prompt.
	JobsChat = "chat"
)

// RoutePrompt is a prompt whose jobs the conformance gate may judge a
// route's targets for.
type RoutePrompt struct {
	Prompt *prompt.Prompt
	// Jobs is how its prompt jobs reach the route: JobsPrompt (its own
	// route) or JobsPromptByRequest (named in the job's `route`).
	Jobs string
	// Chat: it is the route's conformance_prompt, so the route's chat
	// completions are gated by its results too.
	Chat bool
}

// RoutePrompts is every prompt whose jobs may run on route, whose
// conformance_prompt is chatPrompt ("" for none), in name order: every
// loaded prompt, since POST /v1/jobs takes any configured route in `route`
// (the prompt's own when omitted), and the gate judges the route's targets
// for the job's prompt. Both the start-up warning (internal/server) and GET
// /v1/providers' `gate` (gateEntries) judge a route's targets for these.
func RoutePrompts(prompts *prompt.Set, route, chatPrompt string) []RoutePrompt {
	if prompts == nil {
		return nil
	}
	all := prompts.All()
	out := make([]RoutePrompt, len(all))
	for i, p := range all {
		out[i] = RoutePrompt{Prompt: p, Jobs: JobsPromptByRequest, Chat: chatPrompt != "" && p.Name == chatPrompt}
		if p.Route == route {
			out[i].Jobs = JobsPrompt
		}
	}
	return out
}
