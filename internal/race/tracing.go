package race

import (
	"context"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/telemetry"
)

// Spans (SPEC §18): one per job ("router.job"), a child per attempt named
// after the GenAI semantic conventions ("chat <model>"), with
// gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model,
// gen_ai.response.model and gen_ai.usage.* (the usage the attempt stored and
// is priced at: recordUsage), plus the router's own attributes: router.job.id,
// router.attempt.{id,seq,role,outcome,won}, router.provider and
// router.usage.estimated (the usage is the router's estimate).
// The tracer comes from the global provider, a no-op unless internal/telemetry
// installed one.

const tracerName = "github.com/routerhq/router/internal/race"

func tracer() trace.Tracer { return otel.Tracer(tracerName) }

// SubmitNewContext is SubmitNew for a job created while serving a traced
// request: the job's span becomes a child of ctx's span. The parent travels
// in the context the job runs with (submit), so nothing is left behind for a
// job whose span never starts.
func (r *Runner) SubmitNewContext(ctx context.Context, job *store.Job, jp store.JobPlan) {
	r.submitNew(job, jp, trace.SpanContextFromContext(ctx))
}

// startJobSpan starts the job's span, under the request that created the job
// when it was submitted with SubmitNewContext (ctx carries that request's
// span context), as soon as runJob has read the job. end records the job's
// state, with an Error status when it failed (before any attempt too:
// noteJobReason says why) or its outcome is unknown (the caller got no
// answer).
func (r *Runner) startJobSpan(ctx context.Context, job *store.Job) (context.Context, func()) {
	if telemetry.Off() {
		return ctx, func() {}
	}
	ctx, span := tracer().Start(ctx, "router.job "+job.Operation, trace.WithAttributes(
		attribute.String("router.job.id", job.ID),
		attribute.String("router.job.owner", job.Owner),
		attribute.String("router.job.operation", job.Operation),
		attribute.String("router.route", job.Route),
	))
	return ctx, func() {
		if span.IsRecording() {
			// Bounded like the run's other writes on its way out: a stalled
			// database must not keep the span (and a pool connection) past
			// a shutdown that gave up on the run.
			sctx, cancel := r.exitContext(ctx)
			state, err := r.cfg.Store.JobStateAny(sctx, job.ID)
			cancel()
			if err == nil {
				span.SetAttributes(attribute.String("router.job.state", state))
				switch state {
				case store.JobFailed:
					span.SetStatus(codes.Error, "job failed")
				case store.JobUnknown:
					// The caller got no answer (504 outcome_unknown): an
					// error to whoever filters traces on it, as a failure
					// is. A cancelled job is the caller's choice: Unset.
					span.SetStatus(codes.Error, "job outcome unknown: the caller got no answer (504 outcome_unknown); resolve its unknown attempts with POST /v1/jobs/{id}/attempts/{seq}/resolve")
				}
			}
		}
		span.End()
	}
}

// noteJobReason records on the job's span why its run ended before any
// attempt started (router.job.reason): what its state, read when the span
// ends, does not say — the job failed with that reason, or was left pending
// (another replica's to run, or to run again once a circuit breaker may
// admit it).
func noteJobReason(ctx context.Context, reason string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String("router.job.reason", reason))
	}
}

// genAIProvider is gen_ai.provider.name for an adapter.
func genAIProvider(p providers.Provider) string {
	switch p.(type) {
	case *providers.OpenAI:
		return "openai"
	case *providers.Anthropic:
		return "anthropic"
	case *providers.Scripted:
		return "scripted"
	}
	return "unknown"
}

// startAttemptSpan starts an attempt's span; end records its outcome.
func startAttemptSpan(ctx context.Context, job *store.Job, a *store.Attempt, t *Target, model string) (context.Context, func(attemptResult)) {
	if telemetry.Off() {
		return ctx, func(attemptResult) {}
	}
	ctx, span := tracer().Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", genAIProvider(t.Provider)),
		attribute.String("gen_ai.request.model", model),
		attribute.String("router.job.id", job.ID),
		attribute.String("router.attempt.id", a.ID),
		attribute.Int("router.attempt.seq", a.Seq),
		attribute.String("router.attempt.role", a.Role),
		attribute.String("router.provider", a.Provider),
	))
	return ctx, func(res attemptResult) {
		span.SetAttributes(
			attribute.String("router.attempt.outcome", res.state),
			attribute.Bool("router.attempt.won", res.state == store.AttemptWon),
		)
		if res.err != nil {
			span.SetAttributes(attribute.String("error.type", string(res.err.Kind)))
			if !stoppedByRouter(res) {
				// Bounded here too: a provider's text is cut to 300 bytes
				// where the error is made, and one path that forgot to (a
				// cut stream quoting its finish_reason) put 200 KB there.
				span.SetStatus(codes.Error, cutTo(res.err.Error(), maxErrorStatus))
			}
			if res.err.Usage != nil { // a failed answer the provider billed
				span.SetAttributes(
					attribute.String("gen_ai.response.model", res.err.ResponseModel),
					attribute.String("gen_ai.response.id", res.err.ResponseID),
				)
			}
		} else if res.state == store.AttemptInvalid {
			// The rule and path only: a violation's message quotes the
			// output (tenant data, of any size), which stays out of traces
			// as it stays out of the log line.
			span.SetAttributes(attribute.String("error.type", "invalid_output"))
			span.SetStatus(codes.Error, brokeWhat(job, a, res)+": "+truncateAttr(res.broken))
		}
		recordUsage(span, res.usage)
		span.End()
	}
}

// stoppedByRouter says the router itself cancelled the attempt — a hedge
// loser once another attempt won, an attempt of a job its caller cancelled:
// its span's status stays unset, as router_attempt_errors_total does not count
// it. The outcome (router.attempt.outcome=cancelled) and error.type still say
// what happened. A silent loser (attemptResult.silentLoser), which its
// target's breaker counts, is one too: the span tells of the call, which
// did not fail; the breaker's count is in the attempt's stored error.
func stoppedByRouter(res attemptResult) bool {
	return res.state == store.AttemptCancelled && res.err != nil && res.err.Kind == providers.KindCancelled
}

// brokeWhat says what an invalid answer broke, in invalidWhy's words: a
// prompt job's breaks its prompt's contract; a chat job's (no prompt) misses
// the request's response_format, or cannot be used at all. A chat job's
// words are read back from the attempt's failure note, res.reason
// ("<provider>: <why> (<violation>)", as the attempt wrote it with the job's
// spec and the violation, which the span does not have); none of invalidWhy's
// phrases holds " (". The violation after them, which quotes the output,
// stays out.
func brokeWhat(job *store.Job, a *store.Attempt, res attemptResult) string {
	if _, isChat := chat.Route(job.Operation); !isChat {
		return "output breaks the prompt's contract"
	}
	if why, _, ok := strings.Cut(strings.TrimPrefix(res.reason, a.Provider+": "), " ("); ok && strings.HasPrefix(why, "the answer ") {
		return why
	}
	return "the answer cannot be used"
}

// recordUsage puts on an attempt's span, as it ends, the usage its attempt
// stored and is priced at (attemptResult.usage): the provider's figures as
// the router corrected them (a total the split leaves out counted as output,
// answerUsage), or the router's own estimate (router.usage.estimated: a
// stream that reported no usage, a cancelled hedge loser, an unknown
// attempt). A span whose attempt stored no usage of its own — its record
// not written, another transition's kept, the attempt abandoned to its
// lease — carries none, as router_cost_usd_total counts none for it: the
// provider's raw figures are never put on the span, so the trace's tokens,
// the attempt's usage and cost_usd, and the metrics agree.
func recordUsage(span trace.Span, u providers.Usage) {
	if u == (providers.Usage{}) || !span.IsRecording() {
		return
	}
	span.SetAttributes(
		attribute.Int("gen_ai.usage.input_tokens", u.PromptTokens),
		attribute.Int("gen_ai.usage.output_tokens", u.CompletionTokens),
	)
	if u.Estimated {
		span.SetAttributes(attribute.Bool("router.usage.estimated", true))
	}
}

// recordResponse puts what the provider answered on the attempt's span: the
// response's model, id and finish reason. Its usage is not (recordUsage puts
// the stored figure there when the span ends).
func recordResponse(ctx context.Context, resp *providers.Response) {
	span := trace.SpanFromContext(ctx)
	if resp == nil || !span.IsRecording() {
		return
	}
	span.SetAttributes(
		attribute.String("gen_ai.response.model", resp.Model),
		attribute.String("gen_ai.response.id", resp.ResponseID),
	)
	if resp.FinishReason != "" {
		span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{resp.FinishReason}))
	}
}

// maxStatusDetail bounds what an attempt span's status adds to its fixed
// text: the span's attributes are cut by the SDK, its status is not.
const maxStatusDetail = 256

// maxErrorStatus bounds a failed attempt's span status, its error's text
// (provider, kind, HTTP status and a message the adapters already cut to 300
// bytes, which it keeps whole).
const maxErrorStatus = 1024

// truncateAttr cuts s to maxStatusDetail bytes, at a rune boundary.
func truncateAttr(s string) string { return cutTo(s, maxStatusDetail) }

// cutTo cuts s to n bytes, at a rune boundary, marking the cut with "…".
func cutTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
