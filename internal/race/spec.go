package race

import (
	"encoding/json"
	"fmt"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// spec is what a job asks of providers and how their answers are judged. It is
// built from a prompt (prompt jobs) or from a chat completion request (chat
// jobs); the race itself does not care which.
type spec struct {
	msgs        []providers.Message
	model       string // overrides the provider's model when set
	temperature *float32
	topP        *float32
	stop        []string
	maxTokens   int
	seed        *int
	user        string
	format      *providers.ResponseFormat
	// formatText is format's schema as the compact text the adapters send,
	// when known at no cost (a prompt's, made at load); counted compacts a
	// chat request's.
	formatText string
	tools      json.RawMessage
	toolChoice json.RawMessage
	// penalties, logitBias and reasoningEffort are a chat request's (prompts
	// have none).
	presencePenalty  float32
	frequencyPenalty float32
	logitBias        map[string]int
	reasoningEffort  string
	// parallelToolCalls, verbosity and chatTemplateKwargs are a chat
	// request's too, passed on as the caller sent them.
	parallelToolCalls  *bool
	verbosity          string
	chatTemplateKwargs json.RawMessage
	// serviceTier, safetyIdentifier and promptCacheKey are a chat
	// request's OpenAI options ("": none).
	serviceTier, safetyIdentifier, promptCacheKey string
	// gate is the prompt whose conformance results gate fallbacks; nil skips
	// the conformance gate (a chat route that names no gating prompt).
	gate *prompt.Prompt
	// judge returns the job's result for a winning answer, or its violations.
	judge func(resp *providers.Response) (json.RawMessage, []contract.Violation)
	// callers, when set, says whether a violation is of the caller's own
	// contract (a chat request's response_format), which says nothing of the
	// target's health: its breaker does not count it (outcomeOf).
	callers func(v contract.Violation) bool
	// jobID is the job judged for; a spec planned before its job existed gets
	// it once the job is created.
	jobID string
	// targets are the runner's targets, by id: a model passed through in
	// place of a target's is counted, in the usage estimates, with the
	// tokenizer of the target that serves it (targetFor), as routing counts
	// it. nil: with the tokenizer its name chooses.
	targets map[string]*Target
	// owner is the job's owner (tenant): the token counts of its texts are
	// cached for it alone (tokens.CountMessagesFor), so one tenant cannot
	// time its requests to learn what another sent.
	owner string
}

func (s *spec) request(a *store.Attempt, jobID string) *providers.Request {
	model := a.Model // the target's model, or the one the job asks for
	if model == "" {
		model = s.model
	}
	return &providers.Request{
		AttemptID: a.ID, JobID: jobID, Model: model, Messages: s.msgs,
		Temperature: s.temperature, TopP: s.topP, Stop: s.stop, MaxTokens: s.maxTokens, Seed: s.seed, User: s.user,
		ResponseFormat: s.format, Tools: s.tools, ToolChoice: s.toolChoice,
		PresencePenalty: s.presencePenalty, FrequencyPenalty: s.frequencyPenalty, LogitBias: s.logitBias, ReasoningEffort: s.reasoningEffort,
		ParallelToolCalls: s.parallelToolCalls, Verbosity: s.verbosity, ChatTemplateKwargs: s.chatTemplateKwargs,
		ServiceTier: s.serviceTier, SafetyIdentifier: s.safetyIdentifier, PromptCacheKey: s.promptCacheKey,
	}
}

// modelOn is the model an attempt of this spec on target t asks for: the
// job's (a prompt's model, or the model a chat request names) when set, else
// the target's — the rule of orchestrator.start, which the conformance gate
// is asked about.
func (s *spec) modelOn(t *Target) string {
	if s.model != "" || t == nil {
		return s.model
	}
	return t.Model
}

// specFor builds the spec of a job, or says why the job cannot run.
func (r *Runner) specFor(job *store.Job, route *Route) (*spec, error) {
	if _, ok := chat.Route(job.Operation); ok {
		var in chat.Input
		if err := json.Unmarshal(job.Input, &in); err != nil {
			return nil, fmt.Errorf("the stored chat request does not decode: %w", err)
		}
		in.SetOwner(job.Owner) // its schemas are compiled through the owner's cache
		v, err := in.Validator()
		if err != nil {
			return nil, fmt.Errorf("the response_format schema does not compile: %w", err)
		}
		s := &spec{msgs: in.Messages, model: in.Model, temperature: in.Temperature, topP: in.TopP, stop: in.Stop, maxTokens: in.MaxTokens, seed: in.Seed,
			user: in.User, format: in.ProviderFormat(), tools: in.Tools, toolChoice: in.ToolChoice, jobID: job.ID,
			presencePenalty: in.PresencePenalty, frequencyPenalty: in.FrequencyPenalty, logitBias: in.LogitBias, reasoningEffort: in.ReasoningEffort,
			parallelToolCalls: in.ParallelToolCalls, verbosity: in.Verbosity, chatTemplateKwargs: in.ChatTemplateKwargs, targets: r.cfg.Targets, owner: job.Owner,
			serviceTier: in.ServiceTier, safetyIdentifier: in.SafetyIdentifier, promptCacheKey: in.PromptCacheKey}
		s.judge = func(resp *providers.Response) (json.RawMessage, []contract.Violation) {
			return chat.Judge(&in, v, s.jobID, resp)
		}
		s.callers = func(v contract.Violation) bool { return !chat.ProviderRule(v.Rule) }
		if route.ConformancePrompt != "" {
			p, err := r.cfg.Prompts.Get(route.ConformancePrompt, "")
			if err != nil {
				return nil, fmt.Errorf("the route's conformance prompt is not loaded: %w", err)
			}
			s.gate = p
		}
		return s, nil
	}
	p, err := r.cfg.Prompts.Get(job.Operation, job.PromptVersion)
	if err != nil {
		return nil, fmt.Errorf("the prompt is no longer loaded: %w", err)
	}
	msgs, err := p.RenderParsed(job.ParsedInput, job.Input)
	if err != nil {
		return nil, fmt.Errorf("the prompt cannot be rendered: %w", err)
	}
	v := p.Validator()
	return &spec{msgs: msgs, model: p.Model, temperature: p.Temperature, maxTokens: p.MaxTokens, seed: p.Seed,
		format: p.ProviderResponseFormat(), formatText: p.FormatText(), gate: p, targets: r.cfg.Targets, owner: job.Owner,
		judge: func(resp *providers.Response) (json.RawMessage, []contract.Violation) {
			return v.Validate(resp.Content)
		}}, nil
}
